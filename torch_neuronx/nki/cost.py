"""placeholder"""
def estimate(trace):
    return None
