while True:  # a busy process beside the ranks (test_distributed_collectives.py)
    pass
