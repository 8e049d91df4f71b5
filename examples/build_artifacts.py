"""Builds the local Hugging Face artifacts the examples and the demo use, since
no machine here reaches a model hub:

- `<out>/tokenizer`: a byte-level BPE tokenizer trained here (tokenizers) with
  Qwen-style chat special tokens and a chat template;
- `<out>/qwen3-tiny` and `<out>/llama-tiny`: small random-weight causal LMs
  (Qwen3- and Llama-style) saved as ordinary model directories with that
  tokenizer;
- `<out>/qwen3-tiny-kv4`: qwen3-tiny with 4 KV heads (one per attention
  head), so TP=4 shards whole heads (`make scale`, the announcement's TP 4 x FSDP 8
  grid); qwen3-tiny's 2 KV heads shard at most over TP=2;
- `<out>/qwen-image21-tiny`: a small random-weight Qwen-Image 2.1
  text-to-image pipeline (diffusers; the announcement's Diffusers script's) whose
  transformer has a tensor-parallel plan, with a Qwen3-VL processor built on
  that tokenizer (examples/build_qwen_image21_pipeline.py);
- `<out>/flux-tiny`: a small random-weight FLUX.1 pipeline (CLIP and T5 text
  encoders and tokenizers made here; examples/build_flux_pipeline.py);
- `<out>/qa-chat`: a chat dataset in UltraChat's format (a `messages` column;
  splits `train_sft` and `test_sft`) saved as parquet files that
  `datasets.load_dataset(path, split="train_sft")` reads. The conversations
  are short arithmetic questions and answers: a task a tiny model learns in
  minutes.

Run: .venv/bin/python examples/build_artifacts.py [--out build/artifacts]
Rebuilding is deterministic (fixed seeds); each artifact is skipped when its
directory is complete (pass --force to rebuild all).
"""

import argparse
import random
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def qa_pairs(count: int, seed: int) -> list[tuple[str, str]]:
    """Questions like "What is 3 plus 4?" with answers like "3 plus 4 is 7."."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        if rng.random() < 0.5:
            pairs.append((f"What is {a} plus {b}?", f"{a} plus {b} is {a + b}."))
        else:
            pairs.append((f"Spell the number {a}.", f"{a} is spelled {NUMBER_WORDS[a]}."))
    return pairs


def conversations(count: int, seed: int) -> list[dict]:
    return [
        {"prompt": q, "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}
        for q, a in qa_pairs(count, seed)
    ]


def build_tokenizer(out: Path, texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=384, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
        model_max_length=1024,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return fast


def build_model(
    arch: str,
    tokenizer,
    out: Path,
    initializer_range: float = 0.05,
    kv_heads: int = 2,
    hidden_size: int = 128,
    heads: int = 4,
) -> None:
    """A tiny random-weight model of `arch` ("qwen3" or "llama") with the
    tokenizer, saved to `out`. A larger initializer range gives random logits
    clear top-1 margins (for tests comparing greedy tokens). TP shards KV
    heads whole: TP may be at most `kv_heads` (and divide it). Larger
    `hidden_size` (heads of hidden_size // heads dims) makes a model whose
    layers outweigh their op overhead (benchmarks)."""
    import torch
    import transformers

    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=4,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=hidden_size // heads,
        max_position_embeddings=1024,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
        initializer_range=initializer_range,
    )
    config = {"qwen3": transformers.Qwen3Config, "llama": transformers.LlamaConfig}[arch](**common)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config)
    model.generation_config = transformers.GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def build_dataset(out: Path, rows: list[dict]) -> None:
    from datasets import Dataset

    (out / "data").mkdir(parents=True, exist_ok=True)
    split = len(rows) * 9 // 10
    for name, part in (("train_sft", rows[:split]), ("test_sft", rows[split:])):
        Dataset.from_list(part).to_parquet(str(out / "data" / f"{name}-00000-of-00001.parquet"))


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/artifacts", type=Path)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    out = args.out
    rows = conversations(2000, seed=0)
    texts = [m["content"] for r in rows for m in r["messages"]] + ["user assistant system"]
    built = []

    def pending(name: str) -> bool:
        return args.force or not (out / name / ".complete").exists()

    def mark(name: str) -> None:
        (out / name / ".complete").write_text("ok\n")
        built.append(name)

    if pending("tokenizer"):
        build_tokenizer(out / "tokenizer", texts)
        mark("tokenizer")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out / "tokenizer")
    for arch in ("qwen3", "llama"):
        if pending(f"{arch}-tiny"):
            build_model(arch, tokenizer, out / f"{arch}-tiny")
            mark(f"{arch}-tiny")
    if pending("qwen3-tiny-kv4"):
        build_model("qwen3", tokenizer, out / "qwen3-tiny-kv4", kv_heads=4)
        mark("qwen3-tiny-kv4")
    if pending("qwen-image21-tiny"):
        if __package__:  # imported as examples.build_artifacts (tests, benchmarks)
            from .build_qwen_image21_pipeline import build_qwen_image21_pipeline
        else:  # run as a script, or imported by a script in examples/
            from build_qwen_image21_pipeline import build_qwen_image21_pipeline

        build_qwen_image21_pipeline(out / "tokenizer", out / "qwen-image21-tiny")
        mark("qwen-image21-tiny")
    if pending("flux-tiny"):
        if __package__:
            from .build_flux_pipeline import build_flux_pipeline
        else:
            from build_flux_pipeline import build_flux_pipeline

        build_flux_pipeline(out / "flux-tiny")
        mark("flux-tiny")
    if pending("qa-chat"):
        build_dataset(out / "qa-chat", rows)
        mark("qa-chat")
    print(f"built {', '.join(built)} in {out}" if built else f"artifacts already built in {out}")
    return out


if __name__ == "__main__":
    main()
