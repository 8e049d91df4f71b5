# Supervised fine-tuning with TRL, TP x FSDP: the announcement's second script,
# unchanged. The model and dataset are local (examples/build_artifacts.py).
# Run on 2 emulated NeuronCores (TP=2 x FSDP=1; or TP_SIZE=1 FSDP_SIZE=2):
#   TP_SIZE=2 FSDP_SIZE=1 HF_DEACTIVATE_ASYNC_LOAD=1 torchrun --nproc_per_node=2 \
#     examples/sft_neuron_example.py --model_name_or_path build/artifacts/qwen3-tiny \
#     --dataset_name build/artifacts/qa-chat --dataset_train_split train_sft --output_dir out \
#     --dtype bfloat16 --max_length 128 --packing true --packing_strategy wrapped \
#     --learning_rate 3e-3 --num_train_epochs 1 --logging_steps 2 --per_device_train_batch_size 4 \
#     --gradient_accumulation_steps 1 --save_only_model true --torch_compile true
import os, torch
from datasets import load_dataset
from transformers.distributed import DistributedConfig
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser

def main(script_args, training_args, model_args):
    torch._dynamo.config.automatic_dynamic_shapes = False
    training_args.model_init_kwargs = {
        "revision": model_args.model_revision,
        "trust_remote_code": training_args.trust_remote_code,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype, "device_map": None}
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        training_args.model_init_kwargs["distributed_config"] = DistributedConfig(
            tp_size=int(os.environ.get("TP_SIZE", "1")),
            fsdp_size=int(os.environ.get("FSDP_SIZE", "1")))
    train_dataset = load_dataset(script_args.dataset_name, name=script_args.dataset_config,
                                 split=script_args.dataset_train_split)
    train_dataset = train_dataset.select_columns(["messages"])
    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args,
                         train_dataset=train_dataset)
    trainer.train(); trainer.save_model(training_args.output_dir); trainer.end()

if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    main(*parser.parse_args_and_config())
