"""Two streams that wait for each other (torch.Stream.wait_stream, whose event
dies at once) with a copy in between, 300 rounds; a hang dumps the stacks
(test_streams.py)."""

import faulthandler

import torch

import torch_neuronx  # noqa: F401

faulthandler.dump_traceback_later(60, exit=True)
side, main = torch.neuron.Stream(), torch.neuron.current_stream()
total = torch.zeros(5, device="neuron")
for _ in range(300):
    side.wait_stream(main)
    with torch.neuron.stream(side):
        total += torch.ones(5).to("neuron")
    main.wait_stream(side)
print("rounds", int(total.sum().item()) // 5)
