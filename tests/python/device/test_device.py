"""Registration, device counts under the runtime's environment variables,
selection, properties, torch.accelerator and the info listing."""

import pytest
import torch
from helpers.processes import run_ok, run_python


def test_registration():
    assert torch._C._get_privateuse1_backend_name() == "neuron"
    assert torch.neuron is torch.get_device_module("neuron")
    t = torch.ones(2).neuron()
    assert t.is_neuron and t.device == torch.device("neuron", 0)
    m = torch.nn.Linear(2, 2).neuron()
    assert m.weight.is_neuron
    assert torch.ones(2).untyped_storage().neuron().device.type == "neuron"
    assert torch.ones(2, device="neuron").untyped_storage().is_neuron


def test_import_torch_alone_registers_neuron():
    out = run_ok("device_import_torch_alone", fresh=True)  # what `import torch` itself does
    assert out.split() == ["True", "neuron:0"]


def test_autoload_can_be_disabled():
    out = run_ok("device_has_neuron", env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}, fresh=True)
    assert out.strip() == "False"


def test_default_is_one_trainium2_chip_at_lnc2():
    assert torch.neuron.device_count() == 4
    props = torch.neuron.get_device_properties(0)
    assert props.total_memory == 24 * 2**30
    assert props.logical_nc_config == 2
    assert "NeuronCore" in torch.neuron.get_device_name(1)


@pytest.mark.parametrize(
    "env, count, memory",
    [
        ({"NEURON_LOGICAL_NC_CONFIG": "1"}, 8, 12 * 2**30),
        ({"NEURON_RT_VISIBLE_CORES": "0-1,3"}, 3, 24 * 2**30),
        ({"NEURON_RT_VISIBLE_CORES": "2"}, 1, 24 * 2**30),
        ({"NEURON_RT_NUM_CORES": "2"}, 2, 24 * 2**30),
        ({"TORCH_NEURONX_EMU_HBM": "1G"}, 4, 2**30),
        ({"TORCH_NEURONX_EMU_HBM": "123456789"}, 4, 123456789),
        ({"TORCH_NEURONX_EMU_CHIPS": "2", "NEURON_LOGICAL_NC_CONFIG": "1"}, 16, 12 * 2**30),
    ],
)
def test_environment_shapes_the_devices(env, count, memory):
    out = run_ok("device_count_and_memory", env=env)
    assert out.split() == [str(count), str(memory)]


def test_visible_cores_map_to_physical_cores():
    out = run_ok("device_physical_cores", env={"NEURON_RT_VISIBLE_CORES": "1,3"})
    assert out.strip() == "[2, 6]"  # logical core c at LNC=2 starts at physical core 2c


@pytest.mark.parametrize(
    "env, message",
    [
        ({"NEURON_LOGICAL_NC_CONFIG": "3"}, "NEURON_LOGICAL_NC_CONFIG='3'"),
        ({"NEURON_RT_VISIBLE_CORES": "0-9"}, "names core 4"),
        ({"NEURON_RT_VISIBLE_CORES": "a,b"}, "NEURON_RT_VISIBLE_CORES='a,b' is not valid: it accepts core ids"),
        ({"TORCH_NEURONX_EMU_HBM": "lots"}, "TORCH_NEURONX_EMU_HBM='lots'"),
        ({"NEURON_RT_NUM_CORES": "9"}, "NEURON_RT_NUM_CORES=9"),
        ({"TORCH_NEURONX_DRIVER": "nope"}, "TORCH_NEURONX_DRIVER='nope' is not valid: it accepts emu, null"),
    ],
)
def test_bad_settings_give_clear_errors(env, message):
    proc = run_python("device_availability", "allocate", env=env)
    assert proc.returncode != 0
    assert proc.stdout.split() == ["False", "0"]  # availability checks never raise
    assert message in proc.stderr, proc.stderr


def test_null_driver_has_no_devices():
    out = run_ok("device_availability", env={"TORCH_NEURONX_DRIVER": "null"})
    assert out.split() == ["False", "0"]


def test_set_device_and_context_manager():
    torch.neuron.set_device(2)
    assert torch.neuron.current_device() == 2
    assert torch.empty(1, device="neuron").device == torch.device("neuron", 2)
    with torch.neuron.device(1):
        assert torch.neuron.current_device() == 1
        assert torch.empty(1, device="neuron").device.index == 1
    assert torch.neuron.current_device() == 2
    t = torch.empty(1, device="neuron:3")
    with torch.neuron.device_of(t):
        assert torch.neuron.current_device() == 3
    torch.neuron.set_device("neuron:0")
    assert torch.neuron.current_device() == 0


def test_accelerator_reports_neuron():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("neuron")
    assert torch.accelerator.device_count() == 4
    torch.accelerator.set_device_index(1)
    assert torch.accelerator.current_device_index() == 1
    torch.accelerator.set_device_index(0)
    assert torch.accelerator.current_stream().device.type == "neuron"
    torch.accelerator.synchronize()
    x = torch.empty(1024, device="neuron")
    assert torch.accelerator.memory_allocated() >= x.nbytes
    free, total = torch.accelerator.get_memory_info()
    assert total == 24 * 2**30 and 0 < free < total


def test_lazy_start():
    out = run_ok("device_lazy_start")
    assert out.split() == ["False", "False", "True"]


def test_info_listing():
    out = run_ok("device_info", env={"NEURON_RT_VISIBLE_CORES": "1-2"})
    assert "driver: emu" in out
    assert "neuron:0" in out and "neuron:1" in out and "neuron:2" not in out
    assert "24.00 GiB" in out
    assert "NEURON_RT_VISIBLE_CORES=1,2" in out  # the setting in effect


def test_misc_module_functions():
    assert torch.neuron.is_bf16_supported()
    assert torch.bfloat16 in torch.neuron.get_amp_supported_dtype()
    assert not torch.neuron._is_in_bad_fork()
    torch.neuron._lazy_init()
    assert torch.neuron.is_initialized()
    assert torch.neuron.get_device_capability() == (3, 0)
