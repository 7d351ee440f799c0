def weight_variance(current, old, prompt):
    pi_new = current.response_probs(prompt)
    pi_old = old.response_probs(prompt)
    seen = pi_old > 0
    chi2 = ((pi_new[seen] - pi_old[seen]) ** 2 / pi_old[seen]).sum()  # the chi-squared divergence
    return chi2
