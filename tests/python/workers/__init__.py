"""The programs the Python tier runs in fresh processes, one file each, named
after the test file that runs them (collectives_*, faults_*, device_*, ...).

Ranks are started by `helpers.dist_launch.launch(name, world, tmp_path,
args=[...])` and import RANK, WORLD and init() from `helpers.rank`; one-process
programs run through `helpers.processes.run_ok(name, *args, env=...)`. Both put
tests/python on PYTHONPATH, so a worker imports `helpers` and its siblings.
Parameters come as argv, never as text pasted into the program."""
