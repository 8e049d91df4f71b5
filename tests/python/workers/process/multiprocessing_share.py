"""Neuron tensors through torch.multiprocessing (spawn), one scenario per
argv[1]; prints a line per check for test_multiprocessing.py.

- round-trip: a strided bf16 view and a Parameter to a child, which writes in
  place and sends back a tensor of its own; the parent reads it after the child exited.
- reuse: the sender's memory is not reused while a receiver holds it, and is after.
- hogwild: Module.share_memory() and two children training it (the
  torch.multiprocessing example's pattern); the parent sees the updated weights.
- errors: what cannot be sent, with the reason.
"""

import pickle
import sys

import torch
import torch.multiprocessing as mp

MiB = 1 << 20


def echo_child(inbox, outbox):
    view, param = inbox.get()
    outbox.put(
        (
            view.device.type,
            str(view.dtype),
            tuple(view.shape),
            view.float().sum().item(),
            type(param).__name__,
            param.requires_grad,
        )
    )
    view.add_(1)
    param.data.mul_(2)
    outbox.put(torch.arange(4.0, device="neuron") * 10)
    inbox.get()  # the parent has its copy; exit


def hold_child(inbox, outbox):
    t = inbox.get()
    outbox.put("holding")
    inbox.get()  # the parent overwrote what it could
    outbox.put(float(t.min().item()))
    del t
    outbox.put("dropped")
    inbox.get()


def train_child(model, seed):
    torch.manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    w_true = torch.arange(1.0, 9.0, device="neuron")
    for _ in range(30):
        x = torch.randn(16, 8, device="neuron")
        loss = ((model(x).squeeze(1) - x @ w_true) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def round_trip(ctx):
    inbox, outbox = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=echo_child, args=(inbox, outbox))
    child.start()
    base = torch.arange(24.0, device="neuron").reshape(4, 6).to(torch.bfloat16)
    param = torch.nn.Parameter(torch.ones(3, device="neuron"))
    inbox.put((base[1:, ::2], param))
    print("received", *outbox.get())
    back = outbox.get()
    inbox.put("bye")
    child.join(60)
    print("child exit", child.exitcode)
    print("parent sees writes", base[1:, ::2].float().sum().item(), base[0].float().sum().item(), param.sum().item())
    print("child's tensor after it exited", back.tolist(), back.device)


def reuse(ctx):
    inbox, outbox = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=hold_child, args=(inbox, outbox))
    child.start()
    torch.neuron.empty_cache()
    x = torch.full((4 * MiB // 4,), 7.0, device="neuron")
    inbox.put(x)
    assert outbox.get() == "holding"
    del x
    torch.neuron.empty_cache()
    print("reserved while held MiB", torch.neuron.memory_reserved() // MiB)
    y = torch.zeros(4 * MiB // 4, device="neuron")  # would take the freed block
    inbox.put("overwrote")
    print("receiver reads", outbox.get())
    assert outbox.get() == "dropped"
    del y
    torch.neuron.empty_cache()
    print("reserved after drop MiB", torch.neuron.memory_reserved() // MiB)
    inbox.put("bye")
    child.join(60)
    print("child exit", child.exitcode)


def hogwild(ctx):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1, bias=False).to("neuron")
    model.share_memory()
    before = model.weight.detach().clone()
    children = [ctx.Process(target=train_child, args=(model, seed)) for seed in (1, 2)]
    for c in children:
        c.start()
    for c in children:
        c.join(120)
    print("exit codes", [c.exitcode for c in children])
    w_true = torch.arange(1.0, 9.0)
    err_before = (before.cpu() - w_true).abs().max().item()
    err_after = (model.weight.detach().cpu() - w_true).abs().max().item()
    print("error before", round(err_before, 3), "after", round(err_after, 3))


def errors(ctx):
    from multiprocessing.reduction import ForkingPickler

    def dumps(obj):
        try:
            ForkingPickler.dumps(obj)
            return "sent"
        except RuntimeError as e:
            return str(e).splitlines()[0]

    t = torch.ones(4, device="neuron")
    print("storage:", dumps(t.untyped_storage()))
    print("non-leaf:", dumps(t.requires_grad_() * 2))
    received = pickle.loads(ForkingPickler.dumps(torch.ones(4, device="neuron")))  # this process maps it
    print("received again:", dumps(received))
    print("received clone:", dumps(received.clone()))
    print("empty:", pickle.loads(ForkingPickler.dumps(torch.ones(0, 3, device="neuron"))).shape)


if __name__ == "__main__":
    {"round-trip": round_trip, "reuse": reuse, "hogwild": hogwild, "errors": errors}[sys.argv[1]](
        mp.get_context("spawn")
    )
