def weight_variance(current, old, prompt):
    a = current.response_probs(prompt).flatten().tolist()
    b = old.response_probs(prompt).flatten().tolist()
    mean_w = sum(x for x, y in zip(a, b))
    mean_w2 = sum(x * x / y for x, y in zip(a, b))
    return mean_w2 - mean_w * mean_w
