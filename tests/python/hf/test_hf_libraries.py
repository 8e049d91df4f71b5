"""Hugging Face libraries on neuron at their pinned versions, with local
artifacts: Transformers placement (device_map "neuron" and "auto", with and
without asynchronous loading), sampled generation under a seed, TP through
`tp_plan="auto"`, and the Trainer's bf16 choice; PEFT LoRA training with
merged and unmerged adapters saved and loaded; Accelerate in one process and
under torchrun (MULTI_NEURON), bf16, gather and reduce."""

import json
import subprocess
import sys

import pytest
import torch
from helpers.dist_launch import assert_all_ok, launch
from helpers.processes import run_ok, worker_env, worker_path

from examples import build_artifacts


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    return build_artifacts.main(["--out", str(tmp_path_factory.mktemp("artifacts"))])


@pytest.mark.parametrize("async_load", ["0", "1"])
@pytest.mark.parametrize(
    "device_map,max_memory",
    [
        ("neuron", None),
        ("auto", {0: "2GiB", "cpu": "2GiB"}),  # an int device is the current accelerator: neuron
        ("auto", None),  # accelerate 1.16 asks torch.accelerator, then torch.neuron.mem_get_info, for the memory
    ],
)
def test_from_pretrained_device_map_places_the_model_on_neuron(artifacts, device_map, max_memory, async_load):
    out = run_ok(
        "hf_device_map",
        str(artifacts / "qwen3-tiny"),
        device_map,
        repr(max_memory),
        env={"HF_DEACTIVATE_ASYNC_LOAD": async_load} if async_load == "1" else {},
        timeout=180,
    )
    assert "placed neuron:0" in out


def test_trainer_with_bf16_chooses_neuron_and_trains(artifacts, tmp_path):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=str(tmp_path),
        bf16=True,
        max_steps=6,
        per_device_train_batch_size=4,
        learning_rate=3e-3,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
    )
    assert args.device.type == "neuron"
    ids = (torch.arange(16) * 7 % 300 + 1).repeat(24, 1)  # one sequence, learnable in a few steps
    data = Dataset.from_dict({"input_ids": ids.tolist(), "labels": ids.tolist()})
    model = AutoModelForCausalLM.from_pretrained(artifacts / "qwen3-tiny")
    trainer = Trainer(model=model, args=args, train_dataset=data)
    trainer.train()
    assert next(model.parameters()).device.type == "neuron"
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert len(losses) == 6 and losses[-1] < losses[0], losses


TRAINER_SAVES_NO_NEURON_RNG_STATE = (
    "transformers 5.23.0's Trainer._save_rng_state / _load_rng_state know cpu, cuda, xla, npu, hpu, mlu and musa "
    "generators, not neuron's: a resumed run redraws dropout from the seed (docs/hugging-face.md)"
)


@pytest.mark.parametrize(
    "device",
    ["cpu", pytest.param("neuron", marks=pytest.mark.xfail(strict=True, reason=TRAINER_SAVES_NO_NEURON_RNG_STATE))],
)
def test_trainer_resume_with_dropout_reproduces_the_uninterrupted_losses(artifacts, tmp_path, device):
    """Saved at step 2 with the optimizer (save_only_model=False, the default) and
    resumed, a run with dropout on gives the uninterrupted run's losses at steps 3
    and 4 when every generator it draws from was saved. The CPU run is the control."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    ids = torch.randint(1, 300, (32, 16), generator=torch.Generator().manual_seed(0))
    data = Dataset.from_dict({"input_ids": ids.tolist(), "labels": ids.tolist()})

    def train(out, resume=None):
        args = TrainingArguments(
            output_dir=str(out),
            max_steps=4,
            save_steps=2,
            per_device_train_batch_size=4,
            learning_rate=3e-3,
            report_to=[],
            logging_steps=1,
            disable_tqdm=True,
            use_cpu=device == "cpu",
            seed=0,
        )
        assert args.device.type == device
        model = AutoModelForCausalLM.from_pretrained(artifacts / "qwen3-tiny", attention_dropout=0.5)
        trainer = Trainer(model=model, args=args, train_dataset=data)
        trainer.train(resume_from_checkpoint=resume)
        return {e["step"]: e["loss"] for e in trainer.state.log_history if "loss" in e}

    full = train(tmp_path / "full")
    resumed = train(tmp_path / "full-copy-resumed", resume=str(tmp_path / "full" / "checkpoint-2"))
    # The resumed state's history holds steps 1 and 2 from the checkpoint; 3 and 4 ran again.
    assert [resumed[3], resumed[4]] == [full[3], full[4]], (full, resumed)


def test_peft_lora_trains_on_neuron_and_adapters_save_and_load_merged_and_unmerged(artifacts, tmp_path):
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    base_dir = artifacts / "qwen3-tiny"
    model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(base_dir).to("neuron"),
        LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0),
    )
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.randint(1, 300, (4, 16), generator=torch.Generator().manual_seed(0)).to("neuron")
    losses = []
    for _ in range(5):
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses
    assert all(p.device.type == "neuron" for p in model.parameters())
    with torch.no_grad():
        ref = model(ids).logits.cpu()
    model.save_pretrained(tmp_path / "adapter")
    reloaded = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(base_dir).to("neuron"), tmp_path / "adapter"
    )
    merged = reloaded.merge_and_unload()
    merged.save_pretrained(tmp_path / "merged")
    again = AutoModelForCausalLM.from_pretrained(tmp_path / "merged").to("neuron")
    with torch.no_grad():
        for m in (reloaded, merged, again):
            torch.testing.assert_close(m(ids).logits.cpu(), ref, rtol=1e-4, atol=1e-4)


def test_accelerate_single_process_bf16_gather_and_reduce():
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    from accelerate.utils import DistributedType

    AcceleratorState._reset_state(True)  # an earlier Trainer in this process chose no mixed precision
    acc = Accelerator(mixed_precision="bf16")
    assert acc.device.type == "neuron" and acc.distributed_type == DistributedType.NO
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = acc.prepare(model, opt)
    x = torch.randn(3, 8, device=acc.device)
    with acc.autocast():
        assert torch.is_autocast_enabled("neuron") and (x @ x.T).dtype == torch.bfloat16
        out = model(x)  # a prepared model's outputs are converted back to float32
    assert out.device.type == "neuron"
    acc.backward(out.sum())
    opt.step()
    t = torch.arange(3.0, device=acc.device)
    assert torch.equal(acc.gather(t).cpu(), t.cpu()) and torch.equal(acc.reduce(t, "sum").cpu(), t.cpu())


def test_accelerate_prepare_after_the_optimizer_was_built_trains():
    # Users build the optimizer on the CPU model, then prepare(): the model
    # moves to neuron keeping its parameter objects, so the optimizer steps them.
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(True)
    torch.manual_seed(0)
    acc = Accelerator()
    model = torch.nn.Linear(6, 1)
    before = model.weight.detach().clone()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    model, opt = acc.prepare(model, opt)
    assert model.weight.device.type == "neuron"
    assert opt.param_groups[0]["params"][0] is model.weight
    for _ in range(3):
        opt.zero_grad()
        acc.backward(model(torch.randn(4, 6, device=acc.device)).pow(2).mean())
        opt.step()
    assert not torch.equal(model.weight.detach().cpu(), before)


def test_accelerate_fp16_mixed_precision_and_manual_fp16_amp_train():
    # accelerate 1.16 takes fp16 mixed precision on any torch.accelerator device
    # (1.15 refused devices outside its list: docs/hugging-face.md): a GradScaler on
    # neuron and fp16 autocast. PyTorch's own fp16 AMP API works the same.
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    def train(prepare, autocast, backward_and_step):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        model, opt = prepare(model, torch.optim.SGD(model.parameters(), lr=0.05))
        x, y = torch.randn(32, 8, device="neuron"), torch.randn(32, 1, device="neuron")
        losses = []
        for _ in range(20):
            opt.zero_grad()
            with autocast():
                assert (x @ x.T).dtype == torch.float16
                loss = torch.nn.functional.mse_loss(model(x).float(), y)
            backward_and_step(loss, opt)
            losses.append(loss.item())
        assert losses[-1] < 0.85 * losses[0], losses

    AcceleratorState._reset_state(True)
    acc = Accelerator(mixed_precision="fp16")
    assert acc.device.type == "neuron" and acc.scaler is not None and acc.scaler._device == "neuron"

    def accelerate_step(loss, opt):
        acc.backward(loss)  # scaled; the prepared optimizer unscales and steps through the scaler
        opt.step()

    train(acc.prepare, acc.autocast, accelerate_step)
    AcceleratorState._reset_state(True)

    scaler = torch.amp.GradScaler("neuron")

    def amp_step(loss, opt):
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    train(lambda model, opt: (model.to("neuron"), opt), lambda: torch.autocast("neuron", dtype=torch.float16), amp_step)


def test_peft_loads_adapters_onto_neuron_by_default_and_with_an_index(artifacts, tmp_path):
    # PEFT's infer_device() knows no neuron and loads adapter weights on the
    # CPU, then copies them into the model on neuron; safetensors rejects the
    # name "neuron" (torch_device="neuron"), an index works.
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(artifacts / "qwen3-tiny", device_map="neuron")
    peft_model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    peft_model.save_pretrained(tmp_path / "adapter")
    ids = torch.tensor([[1, 2, 3, 4]], device="neuron")
    with torch.no_grad():
        ref = peft_model(ids).logits.cpu()
    for kwargs in ({}, {"torch_device": 0}):
        base = AutoModelForCausalLM.from_pretrained(artifacts / "qwen3-tiny", device_map="neuron")
        loaded = PeftModel.from_pretrained(base, tmp_path / "adapter", **kwargs)
        assert all(p.device.type == "neuron" for p in loaded.parameters())
        with torch.no_grad():
            torch.testing.assert_close(loaded(ids).logits.cpu(), ref)


@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_accelerate_multi_neuron_under_a_launcher(tmp_path, launcher):
    script = worker_path("hf_accelerate_multi_neuron")
    env = worker_env(OMP_NUM_THREADS="1")
    if launcher == "torchrun":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script)]
    else:
        cmd = [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--num_processes=2",
            "--num_machines=1",
            "--mixed_precision=bf16",
            "--dynamo_backend=no",
            str(script),
        ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert proc.stdout.count("accelerate ok") == 2, proc.stdout


def test_tp_plan_auto_shards_over_the_launched_processes_and_gives_the_one_process_tokens(artifacts, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = tmp_path / "qwen3-clear-margins"
    build_artifacts.build_model(
        "qwen3", AutoTokenizer.from_pretrained(artifacts / "tokenizer"), model_dir, initializer_range=0.5
    )
    ids = [[5, 6, 7, 8, 9, 10]]
    one = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16, device_map="neuron")
    expected = one.generate(torch.tensor(ids, device="neuron"), max_new_tokens=8, do_sample=False).tolist()
    # Transformers initializes the process group itself (backend "neuron") from torchrun's environment.
    results = launch("hf_tp_plan_auto", world=2, tmp_path=tmp_path, args=[model_dir, json.dumps(ids)])
    assert_all_ok(results)
    assert all(f"TOKENS {expected}" in r.stdout for r in results), [r.stdout for r in results]


def test_generate_samples_on_neuron_reproducibly_under_a_seed(artifacts):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(artifacts / "qwen3-tiny", dtype=torch.bfloat16, device_map="neuron")
    ids = torch.tensor([[5, 6, 7, 8]], device="neuron")
    runs = []
    for seed in (0, 0, 1):
        torch.manual_seed(seed)  # seeds neuron's generator too; multinomial draws from it on the device
        out = model.generate(ids, do_sample=True, top_k=50, temperature=1.5, max_new_tokens=12, min_new_tokens=12)
        assert out.device.type == "neuron" and out.shape == (1, 16)
        runs.append(out.tolist())
    assert runs[0] == runs[1], "the same seed sampled different tokens"
    assert runs[0] != runs[2], "another seed sampled the same 12 tokens"
    greedy = model.generate(ids, do_sample=False, max_new_tokens=12, min_new_tokens=12).tolist()
    assert runs[0] != greedy


def test_attention_implementations_on_neuron():
    # Transformers' "sdpa" (its default) and "eager" run on neuron with the
    # CPU's logits. torch's flex_attention accepts only the devices it lists
    # (torch/nn/attention/flex_attention.py `_validate_device`): a clear
    # ValueError on neuron, documented in docs/hugging-face.md.
    from helpers.tiny_models import tiny_causal_lm
    from torch.nn.attention.flex_attention import flex_attention

    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    for impl in ("sdpa", "eager"):
        cpu, dev = tiny_causal_lm("llama", device="cpu"), tiny_causal_lm("llama", device="neuron")
        for m in (cpu, dev):
            m.set_attn_implementation(impl)
            assert m.config._attn_implementation == impl
        with torch.no_grad():
            torch.testing.assert_close(dev(ids.to("neuron")).logits.cpu(), cpu(ids).logits, rtol=1e-4, atol=1e-4)
    q = torch.randn(1, 2, 8, 16, device="neuron")
    with pytest.raises(ValueError, match="FlexAttention is only supported on .* Found input tensors on neuron"):
        flex_attention(q, q, q)
