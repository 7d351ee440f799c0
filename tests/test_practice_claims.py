"""Issue 51: the claims written for practitioners (folded boxes of 4.3 to 4.5, the fate table's rows), each
recomputed from toy, not read from a notebook, and checked against what its sentence says. The sentences are quoted
in each test's docstring with the glued numbers left out (…).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import toy
from tests.test_claims_43_44 import paragraph_with
from toy.discount import ShiftedReward, discounted_optimum, mean_length

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"
NB43 = CHAPTER / "4.3-classical-vs-llm-rl.ipynb"
NB44 = CHAPTER / "4.4-post-training-pipeline.ipynb"
NB45 = CHAPTER / "4.5-connections.ipynb"
X = 2




def row(concept: str) -> toy.fates.Row:
    return next(r for r in toy.fates.ROWS if r.concept == concept)


# -- 1 (a): the discount's length preference has the sign of the reward --------------------------------------------
def test_the_discount_favours_the_shorter_response_only_for_a_positive_reward():
    """4.3: 'of two equally good responses the shorter wins when r > 0 (the longer when r < 0)'; the box: 'at γ = 1
    nothing changes … (the optimum writes … digits, as before). At γ = 0.9 … among the wrong answers: there the
    optimum writes … digits on average, longer than π_ref's …, while the unshifted reward shortens the right answers,
    from … to …. (At β = 0.1 the optimum is almost all right answers, so its overall length barely moves under the
    penalty.)' The fate table: 'for stopping early when rewards are positive, for going on when they are negative'."""
    from toy.discount import mean_length_given
    assert "the longer when $r < 0$" in paragraph_with(NB43, "of two equally good responses")
    box = paragraph_with(NB43, "Shift the sum reward down by 1")
    assert "longer than" in box and "nothing changes" in box and "barely moves" in box
    ref = toy.reference_policy(eos=True)
    penalty = ShiftedReward("sum_to_target", -1.0)
    opt = {(r, g): discounted_optimum(ref, r, g, 0.1) for r in ("sum_to_target", penalty) for g in (1.0, 0.9)}
    assert mean_length(opt[penalty, 1.0], X) == pytest.approx(mean_length(opt["sum_to_target", 1.0], X), rel=1e-12)
    wrong = {k: mean_length_given(p, X, penalty, -1.0) for k, p in (("ref", ref), ("0.9", opt[penalty, 0.9]))}
    right = {k: mean_length_given(p, X, "sum_to_target", 1.0)
             for k, p in (("ref", ref), ("0.9", opt["sum_to_target", 0.9]))}
    assert wrong["0.9"] > wrong["ref"] + 0.1 and right["0.9"] < right["ref"] - 0.1
    # '(which the optimum at γ = 1 keeps among them, their reward being one constant)'
    assert "which the optimum at $\\gamma = 1$ keeps" in box
    assert mean_length_given(opt[penalty, 1.0], X, penalty, -1.0) == pytest.approx(wrong["ref"], rel=1e-9)
    assert 1 - toy.value(opt[penalty, 0.9], "sum_to_target", X) < 0.01  # almost all right answers
    # so the overall length moves by far less than among the wrong answers
    overall = mean_length(opt[penalty, 0.9], X) - mean_length(opt[penalty, 1.0], X)
    assert 0 < overall < 0.1 * (wrong["0.9"] - wrong["ref"])
    why = row("Discount γ").why
    assert "positive" in why and "negative" in why


# -- 1 (c): which conclusions of 4.5 hold only for plain gradient steps --------------------------------------------
def test_under_adam_the_scale_effects_of_45_vanish():
    """4.5's optimiser box: 'RLOO and the mean baseline … end at the same point … Under plain steps the mean
    baseline's shorter steps leave it behind'; 'Under Adam, GRPO ends at … (less KL than RLOO on …), and PPO at …,
    close to RLOO, where plain steps gave it …'; 'under Adam too every method ends with more KL and less reward than
    the optimum, on …'."""
    import numpy as np

    from toy.page.explorers import critic_free as cf
    box = paragraph_with(NB45, "So two conclusions above hold for plain steps only")
    assert "less KL than RLOO on" in box and "close to RLOO" in box
    main = paragraph_with(NB45, "std division lengthens plain steps")  # the main text says so where it says it
    assert "plain steps (not Adam's: box below)" in main
    b = cf.BETAS.index(cf.ADAM_BETA)
    adam = {m: cf.adam_runs(m) for m in ("rloo", "reinforce", "grpo", "ppo")}
    sgd = {m: cf.training_runs(m, 4) for m in ("rloo", "reinforce", "grpo", "ppo")}

    def end(c, curve, beta_index=0):
        return float(getattr(c, curve)[beta_index, :, -1].mean())

    # the same point under Adam (to 1 %), apart under plain steps (by more than 3 %)
    for curve in ("reward", "kl"):
        assert end(adam["rloo"], curve) == pytest.approx(end(adam["reinforce"], curve), rel=0.01)
    assert end(sgd["reinforce"], "reward", b) < 0.97 * end(sgd["rloo"], "reward", b)
    # plain steps: GRPO and PPO pay more KL than RLOO; Adam: GRPO pays less on most seeds, PPO about the same
    assert end(sgd["grpo"], "kl", b) > end(sgd["rloo"], "kl", b)
    assert end(sgd["ppo"], "kl", b) > end(sgd["rloo"], "kl", b)
    assert end(adam["grpo"], "kl") < end(adam["rloo"], "kl")
    assert (adam["grpo"].kl[0, :, -1] < adam["rloo"].kl[0, :, -1]).mean() > 0.5
    assert end(adam["ppo"], "kl") == pytest.approx(end(adam["rloo"], "kl"), rel=0.05)
    assert end(adam["ppo"], "kl") < 0.8 * end(sgd["ppo"], "kl", b)
    # RLOO under Adam ends near its reward under plain steps (how ADAM_LR was chosen)
    assert end(adam["rloo"], "reward") == pytest.approx(end(sgd["rloo"], "reward", b), abs=0.03)
    opt_r, opt_kl = toy.train.optimum_metrics(cf.ADAM_BETA)
    for c in adam.values():
        assert np.all(c.kl[0, :, -1] > opt_kl) and np.all(c.reward[0, :, -1] < opt_r)


# -- 3: DAPO's dynamic sampling and REINFORCE++'s baseline, on the group explorer's setting -------------------------
def explorer_batch(n: int = 4):
    import numpy as np

    from toy.page.explorers import critic_free as cf
    return np.array([cf.sample_group("sum_to_target", g)[1][:n] for g in range(cf.N_GROUPS)])


def test_dynamic_sampling_costs_more_responses_and_less_at_larger_groups():
    """'a group of four ties with probability …, so the filter samples on average … groups, … responses, per group it
    keeps, instead of four'; 'of the explorer's … sampled groups, … tie at n = 4'; 'Larger groups tie less often: at
    n = 16 with probability …, and the filter costs … groups per group kept'."""
    from toy import batching
    box = paragraph_with(NB45, "DAPO's dynamic sampling, and what it costs")
    assert "instead of four" in box and "tie less often" in box
    assert "If every prompt were like prompt 2" in box and "With the task reward alone" in box
    assert "verl's DAPO recipe" in box and "does not read" in box
    pi = toy.reference_policy()
    c4, c16 = (batching.dynamic_sampling(pi, "sum_to_target", X, n) for n in (4, 16))
    assert 0 < c16.p_tie < c4.p_tie < 1
    assert c4.responses_per_kept > 4 and c4.groups_per_kept > c16.groups_per_kept > 1
    ties = int(batching.is_tie(explorer_batch()).sum())
    assert 0 < ties < len(explorer_batch())
    # a tie group gets 0 from every method but ReMax
    from toy import estimators
    for method in ("reinforce", "rloo", "grpo", "dr_grpo"):
        assert (estimators.advantages(method, explorer_batch()[batching.is_tie(explorer_batch())]) == 0).all()


def test_reinforce_pp_weighs_groups_as_rloo_does_and_grpo_does_not():
    """'One divisor for the whole batch scales every group alike, so REINFORCE++-baseline weighs the two groups as
    RLOO and the mean baseline do; GRPO's divisor, one per group, weighs the lone success more'."""
    import numpy as np

    from toy import batching, estimators
    box = paragraph_with(NB45, "REINFORCE++'s baseline beside")
    assert "the lone success more" in box and 'rpp_ratio_grpo' in box and 'rpp_ratio_rloo' in box
    batch = explorer_batch()
    rpp = batching.reinforce_pp_baseline(batch, tokens=toy.reference_policy().length)
    lone = next(g for g in range(len(batch)) if batch[g].sum() == 1)
    assert batch[0].sum() == 2

    def first_success(values, g):
        return float(values[int(np.argmax(batch[g]))])

    ratio = {m: first_success(estimators.advantages(m, batch[lone]), lone)
             / first_success(estimators.advantages(m, batch[0]), 0) for m in ("rloo", "grpo", "reinforce")}
    ratio["rpp"] = first_success(rpp[lone], lone) / first_success(rpp[0], 0)
    assert ratio["rpp"] == pytest.approx(ratio["rloo"], rel=1e-12) == pytest.approx(ratio["reinforce"], rel=1e-12)
    assert ratio["grpo"] > ratio["rloo"] * 1.1
    # 'subtracts their mean (zero here, since every response has four tokens and a group's advantages sum to zero)'
    assert "zero here" in box
    centred = np.repeat(batch - batch.mean(axis=1, keepdims=True), 4, axis=1)  # one entry per token
    assert centred.mean() == pytest.approx(0.0, abs=1e-12)


def test_the_toys_critic_is_smaller_than_its_policy():
    """4.3's box: 'the table has … cells for prompt 2, one per state, against the tabular policy's … logits there,
    one per state and token'; 'still far off after 64 responses'."""
    box = paragraph_with(NB43, "what a critic costs at scale")
    assert "one per state and token" in box and "still far off after 64 responses" in box
    assert 'quote("critic_cells_x")' in box and "crit_tabular_n" not in box  # not the 5-prompt table's 780
    pi = toy.reference_policy()
    cells = toy.critic.Critic(pi.length, "tabular").weights_reached(X)
    logits = sum(z[X].size for z in toy.TabularPolicy.from_policy(pi).logits)
    assert logits == cells * pi.n_actions and cells < logits
    from toy.page.explorers import classical
    errs = toy.critic.sampled_errors(pi, "sum_to_target", X, "tabular", [64, 1024], seeds=classical.CRITIC_SEEDS)
    assert errs[0] > 2 * errs[1]  # far off after 64, against its error after 1,024


def test_what_to_watch_ties_each_curve_to_a_claim_that_holds():
    """4.5's box: 'under plain steps GRPO ends at … nats against RLOO's …'; 'Every response in the training runs has
    four tokens … (4.3's discount explorer, with an end-of-sequence token, shows the lever)'."""
    from toy.page.explorers import critic_free as cf
    box = paragraph_with(NB45, "Every response in the training runs has")
    assert "GRPO ends at" in box and "against RLOO's" in box
    b = cf.BETAS.index(0.1)
    kl = {m: float(cf.training_runs(m, 4).kl[b, :, -1].mean()) for m in ("grpo", "rloo")}
    assert kl["grpo"] > kl["rloo"]
    assert toy.reference_policy().length == 4 and not toy.reference_policy().eos
    lengths = toy.reference_policy(eos=True).length_distribution(X)  # the discount explorer's policy: lengths vary
    assert (lengths > 0).sum() > 1


# -- the practitioner review (issue 51): the choice between the methods, and where Adam's cancelling stops ---------
def test_adam_cancels_a_shared_scale_but_not_one_that_changes_from_batch_to_batch():
    """4.5's REINFORCE++ box: 'Adam does not cancel a number that changes from batch to batch: its second moment
    averages squared gradients over many batches …, so a batch whose standard deviation is small still weighs more in
    the next updates than its neighbours. Only the scale all batches share cancels'. Checked on toy.train.Ascent,
    Adam's step rule with PyTorch's defaults, on one weight that two kinds of batch push opposite ways in random
    order: scaling every batch by one number leaves the path unchanged; scaling one kind up moves the weight its way."""
    import numpy as np

    from toy.train import ADAM_BETAS, Ascent
    box = paragraph_with(NB45, "Adam does not cancel a number that changes")
    assert "hardly matters" not in box and "Only the scale all batches share cancels" in box
    assert ADAM_BETAS[1] == 0.999 and round(1 / (1 - ADAM_BETAS[1])) == 1000 and round(1 / (1 - 0.95)) == 20
    kind = np.random.default_rng(0).permutation(np.repeat([1.0, -1.0], 200))  # +1: batches of kind A, −1: kind B
    lr = 1e-2

    def run(scale_a, scale_b):
        opt, theta = Ascent("adam", lr), [np.zeros(1)]
        for k in kind:
            theta = opt.step(theta, [np.array([k * (scale_a if k > 0 else scale_b)])])
        return float(theta[0][0])

    assert run(7.0, 7.0) == pytest.approx(run(1.0, 1.0), abs=1e-6)  # a shared scale cancels (ε aside)
    balanced, tilted = run(1.0, 1.0), run(3.0, 1.0)
    assert abs(balanced) < 0.1 * lr * len(kind) < 0.3 * lr * len(kind) < tilted


def test_rloo_or_grpo_the_reweighting_that_survives_adam():
    """4.5's RLOO-or-GRPO box: 'At n = 8, c = … at p = 0.05 and at p = 0.95, against … at p = 0.5 (c(n, p) = c(n, 1 −
    p), least at p = ½)'; 'under Adam the gap closes'; 'a tied group gets 0 from both'; with no KL 'a tied group's
    advantages are exactly 0'."""
    import numpy as np

    from toy import estimators
    from toy.page.explorers import critic_free as cf
    box = "\n\n".join(paragraph_with(NB45, s) for s in ("Under Adam one difference is left", "**Verdict.**",
                                                        "Two caveats about this page's runs"))
    for q in ("verdict_c_low", "verdict_c_half", "verdict_c_ratio", "adam_r_grpo", "adam_r_rloo"):
        assert f'quote("{q}"' in box
    assert "least\nat $p = \\frac12$" in box or "least at $p = \\frac12$" in box
    assert estimators.grpo_scale(8, 0.05) == pytest.approx(estimators.grpo_scale(8, 0.95), rel=1e-12)
    ps = np.linspace(0.01, 0.99, 99)
    c = np.array([estimators.grpo_scale(8, p) for p in ps])
    assert ps[np.argmin(c)] == pytest.approx(0.5) and estimators.grpo_scale(8, 0.05) > estimators.grpo_scale(8, 0.5)
    # 'under Adam its lead is gone (… against RLOO's …, with less KL)'
    b = cf.BETAS.index(cf.ADAM_BETA)
    adam = {m: cf.adam_runs(m) for m in ("grpo", "rloo")}
    sgd = {m: float(cf.training_runs(m, 4).reward[b, :, -1].mean()) for m in ("grpo", "rloo")}
    assert sgd["grpo"] > sgd["rloo"]
    assert adam["grpo"].reward[0, :, -1].mean() < adam["rloo"].reward[0, :, -1].mean()
    assert adam["grpo"].kl[0, :, -1].mean() < adam["rloo"].kl[0, :, -1].mean()
    for tied in ([1.0] * 8, [0.0] * 8):
        for method in ("rloo", "grpo", "reinforce"):
            assert np.all(estimators.advantages(method, np.array(tied)) == 0.0)


def test_reinforce_pp_one_baseline_far_from_a_prompts_value_adds_noise():
    """4.5's REINFORCE++ box: 'where prompts differ in difficulty, one baseline for all of them sits far from the V(x)
    of the easy ones and of the hard ones, which adds noise'. On prompt 2 under π_ref, by enumeration: the noise of
    the one-sample estimate (r − b)∇log π, its second moment E[(r − b)² ‖∇log π‖²], grows as b moves away from V(x)
    (beyond the optimal baseline b*, which lies near V(x))."""

    from toy.estimators import score_norms
    from toy.exploration import optimal_baseline
    from toy.rewards import reward_table
    box = paragraph_with(NB45, "REINFORCE++ itself")
    assert "one response per prompt" in box.replace("\n", " ") and "clipped ratio" in box
    # the claim review's I7: no group baseline defines it, not one sample (OpenRLHF accepts any n for reinforce)
    assert "uses no group baseline (it is usually run with one response per prompt, but works with more)" \
        in " ".join(box.split())
    ref = toy.reference_policy()
    P, s2 = ref.response_probs(X), score_norms(ref, X)
    r = reward_table("sum_to_target", X, ref.length, ref.n_actions)
    v = toy.value(ref, "sum_to_target", X)
    b_star = optimal_baseline(ref, "sum_to_target", X)
    assert abs(b_star - v) < 0.1

    def noise(b):
        return float((P * (r - b) ** 2 * s2).sum())

    assert noise(v) < noise(v + 0.3) < noise(v + 0.6) and noise(v) < noise(v - 0.3) < noise(v - 0.6)


def test_starting_a_run_quotes_the_trainers_defaults_the_table_records():
    """4.5's box 'starting a run': the defaults it names agree with the knob table's notes (read at the cited
    commits), and its tie shares are the dynamic-sampling box's."""
    from toy.page import knobs
    box = "\n\n".join(paragraph_with(NB45, s) for s in ("**What to set first**", "**A start in each trainer's",
                                                        "*Tied groups:*"))
    assert "default the policy's to 1e-6, TRL's experimental PPO to 3e-6" in box
    assert "0.01 in OpenRLHF's reward" in box and "0.28" in box
    notes = " ".join(s.note for k in knobs.KNOBS for s in (k.trl, k.verl, k.openrlhf) if s)
    assert "init_coef 0.01" in notes and "actor's 1e-6" in notes and "default 0.0" in notes
    assert 'quote("ds_tie_4"' in box and 'quote("ds_tie_16"' in box
    from toy import batching
    pi = toy.reference_policy()
    assert batching.tie_probability(pi, "sum_to_target", X, 16) < batching.tie_probability(pi, "sum_to_target", X, 4)


def test_the_critic_box_cites_what_vapo_and_orz_reported():
    """4.3's critic box: 'When the critic pays' cites Open-Reasoner-Zero and VAPO; VAPO's policy λ = 1 − 1/(0.05 l)
    grows with the response's length l (and lies in (0, 1) past 20 tokens)."""
    box = paragraph_with(NB43, "When the critic pays")
    assert "references.bib#hu2025orz" in box and "references.bib#yue2025vapo" in box
    lam = [1 - 1 / (0.05 * length) for length in (40, 400, 4000)]
    assert 0 < lam[0] < lam[1] < lam[2] < 1


# -- round 5 of the practitioner review: the method table, λ and the critic's cost, REINFORCE++ or RLOO ----------
def flat(text: str) -> str:
    return " ".join(text.split())


def box_of(cid: str) -> str:
    import json
    return flat("".join(next(c["source"] for c in json.loads(NB45.read_text())["cells"] if c.get("id") == cid)))


def test_the_method_table_agrees_with_what_the_estimators_do():
    """'starting a run' opens with a table: RLOO '∇J, unbiased'; GRPO 'c(n, p) ∇J'; REINFORCE++-baseline 'RLOO's
    direction, times one number per batch'; PPO 'at λ = 1 V̂ is only a baseline'. Each checked on the toy: RLOO's and
    GRPO's factors by enumeration (c(n, p) moves with p), REINFORCE++-baseline against RLOO on a batch, and GAE at
    λ = 1 against the return less V̂ for arbitrary values."""
    import numpy as np

    from toy import batching, estimators
    box = box_of("c18-start")
    for method in ("PPO with a critic", "GRPO", "RLOO", "REINFORCE++-baseline", "REINFORCE++"):
        assert f"| {method} |" in box, method
    assert box.index("The methods side by side") < box.index("**Which method.**")
    assert "| $\\nabla J$, unbiased |" in box and "$c(n, p)\\,\\nabla J$" in box
    assert "RLOO's direction, times one number per batch" in box and "$\\hat V$ is only a baseline" in box
    # RLOO unbiased, GRPO scaled by c(n, p) that depends on p (exact enumeration on prompt 2)
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    grad = estimators.exact_policy_gradient(pi, "sum_to_target", X)
    mean_rloo, _ = estimators.gradient_moments("rloo", pi, "sum_to_target", X, 4)
    assert np.allclose(mean_rloo, grad, rtol=1e-9, atol=1e-12)
    assert estimators.grpo_scale(8, 0.05) > 1.2 * estimators.grpo_scale(8, 0.5)
    # REINFORCE++-baseline = RLOO × one number for the whole batch
    batch = explorer_batch()
    ratio = batching.reinforce_pp_baseline(batch, tokens=4)[~batching.is_tie(batch)] / estimators.advantages(
        "rloo", batch)[~batching.is_tie(batch)]
    ratio = ratio[np.isfinite(ratio)]
    assert ratio.size > 4 and np.allclose(ratio, ratio[0], rtol=1e-12) and ratio[0] > 0
    # GAE at λ = 1 is the return less V̂(s_t), whatever the values: a baseline, no bias from the critic
    rng = np.random.default_rng(0)
    r, v = rng.normal(size=6), rng.normal(size=6)
    returns = np.cumsum(r[::-1])[::-1]
    assert np.allclose(toy.gae.gae(r, v, 1.0), returns - v, rtol=1e-12)
    assert not np.allclose(toy.gae.gae(r, v, 0.95), returns - v, rtol=1e-3)


def test_gae_below_one_passes_little_of_a_final_reward_to_early_tokens():
    """'Below 1, GAE passes a final reward back to a token k steps before the end with weight λ^k, at most (values 0
    between): … at λ = 0.95 and k = 100'. With zero values every TD error but the last is 0, so A_t = λ^(L−1−t) r."""
    import numpy as np
    box = box_of("c18-start")
    assert 'quote("lam_reach_100", ".4f")' in box and "with weight $\\lambda^k$" in box
    end = np.zeros(101)
    end[-1] = 1.0
    A = toy.gae.gae(end, np.zeros(101), 0.95)
    assert A[0] == pytest.approx(0.95**100, rel=1e-12) and A[0] < 0.01
    assert np.allclose(A, 0.95 ** np.arange(100, -1, -1), rtol=1e-12)
    assert toy.gae.gae(end, np.zeros(101), 1.0)[0] == pytest.approx(1.0)


def test_the_critics_cost_is_an_estimate_by_counting():
    """'a critic of the policy's size makes PPO's model memory … times a group method's with a verifier (… beside a
    reward model of the policy's size), and its compute per sampled token … times (…)', with its basis: 16 bytes per
    trained parameter, 2 per frozen one, 2 FLOPs forward and 4 backward. Recounted here from the parts."""
    from toy.scale import critic_cost
    box = box_of("c18-start")
    assert "as an estimate by counting" in box and "16 bytes per trained parameter" in box and "2 per frozen" in box
    assert "Activations and the engine's cache are left out" in box
    for q in ("cost_memory_verifier", "cost_memory_rm", "cost_compute_verifier", "cost_compute_rm"):
        assert f'quote("{q}"' in box
    trained = {"weights": 2, "gradients": 2, "master weights": 4, "Adam's m": 4, "Adam's v": 4}
    frozen = 2
    for rm in (0.0, 1.0):
        group_memory = sum(trained.values()) + frozen * (1 + rm)  # policy; reference (+ reward model)
        ppo_memory = group_memory + sum(trained.values())  # + a trained critic of the policy's size
        group_flops = 2 + 2 + 2 + (2 + 4) + 2 * rm  # sample, score under π_old and π_ref, train; reward model
        ppo_flops = group_flops + 2 + (2 + 4)  # the critic's values, its training
        cost = critic_cost(1.0, rm)
        assert cost.memory == pytest.approx(ppo_memory / group_memory, rel=1e-12)
        assert cost.compute == pytest.approx(ppo_flops / group_flops, rel=1e-12)
        assert 1.5 < cost.compute < cost.memory < 2
    small = critic_cost(6 / 175)  # InstructGPT's 6B critic beside its 175B policy
    assert 1 < small.compute < small.memory < 1.05


def test_reinforce_pp_or_rloo_noise_on_tied_groups():
    """The REINFORCE++-or-RLOO box: with a learned reward's noise, the tied groups 'carry … of GRPO's update, Σ|A|,
    at σ = 0.05, and … at σ = 0.01: dividing by a group's own std blows its noise up to the size of a real
    difference, however small the noise. Under the batch's one std they carry … and … (RLOO's shares are the same)'.
    Recomputed here from the same draws, and checked over 20 seeds: GRPO's share stays large as σ shrinks,
    REINFORCE++-baseline's shrinks with σ."""
    import numpy as np

    from toy import batching
    box = box_of("c18-verdict")
    assert "REINFORCE++ or RLOO?" in box and "this book does not reproduce their experiments" in box
    assert "references.bib#hu2025reinforcepp" in box and "argue that" in box
    assert "with a bias that vanishes as the batch grows; that is their report" in box
    for q in ("noise_grpo_05", "noise_grpo_01", "noise_rpp_05", "noise_rpp_01"):
        assert f'quote("{q}"' in box
    batch = explorer_batch()
    tied = batching.is_tie(batch)

    def shares(sd, seed):
        s = batch + np.random.default_rng(seed).normal(0.0, sd, size=batch.shape)
        centred = s - s.mean(axis=1, keepdims=True)
        grpo = centred / (s.std(axis=1, ddof=1, keepdims=True) + 1e-4)
        rloo = s - (s.sum(axis=1, keepdims=True) - s) / (s.shape[1] - 1)
        rpp = centred / centred.std(ddof=1)  # every response has the same number of tokens

        def share(a):
            size = np.abs(a).sum(axis=1)
            return size[tied].sum() / size.sum()
        return share(grpo), share(rpp), share(rloo)

    for sd in (0.01, 0.05):
        got = batching.noise_share(batch, sd, rng=0)
        g, r, lo = shares(sd, 0)
        assert got.grpo == pytest.approx(g, rel=1e-9) and got.reinforce_pp == pytest.approx(r, rel=1e-6)
        assert lo == pytest.approx(r, rel=1e-9)  # RLOO's share is REINFORCE++-baseline's
    for seed in range(20):
        g01, r01, _ = shares(0.01, seed)
        g05, r05, _ = shares(0.05, seed)
        assert g01 > 10 * r01 and g05 > 3 * r05 and r01 < r05
        assert g01 > 0.8 * g05  # GRPO's share hardly shrinks with σ


def test_round5_hedges():
    """The review's overstated claims: GRPO for learned rewards hedged; ε_high 'rests on DAPO's report' and the
    book's explorer does not show it; a tied share near 1 'too hard or too easy', read with the mean reward; 4.3's
    two reports 'are consistent with' (not 'back') the critic's pay-off; and the symptom → first-knob table."""
    start, verdict = box_of("c18-start"), box_of("c18-verdict")
    assert "when a learned reward's spread differs" not in verdict and "blows a near-tied group's noise" in verdict
    assert "against entropy collapse" not in start
    assert "rests on DAPO's report" in start and "does not show that" in start
    # '(section 4.3's 20-seed box: about as many seeds end with less entropy as with more)'
    import numpy as np

    from toy.page.explorers import classical
    assert "about as many seeds end with less entropy as with more" in start
    h = {eh: toy.clipping.train(classical.CLIP_PRIOR, classical.CLIP_REWARDS, 0.2, eh, epochs=classical.CLIP_EPOCHS,
                                lr=classical.CLIP_LR).seed_entropy[:, -1] for eh in (0.2, 0.28)}
    more, less = int(np.sum(h[0.28] > h[0.2])), int(np.sum(h[0.28] < h[0.2]))
    assert more > 0 and less > 0 and abs(more - less) <= 0.1 * len(h[0.2])
    assert "too hard or too easy" in start and "read it with the mean reward" in start
    critic = flat(paragraph_with(NB43, "When the critic pays"))
    assert "back this" not in critic and "are consistent with this, though neither isolates the critic" in critic
    assert "**Symptom, then the first knob to turn.**" in start
    for symptom in ("tied share high, mean reward near 0", "tied share high, mean reward near 1",
                    "entropy collapsing early", "explained variance $\\le 0$"):
        assert f"| {symptom} |" in start, symptom
    assert "(1) The prompts and $n$" in start and "(7) The sampling temperature" in start


# -- round 6 (the practitioner's review, items 1 to 7) -------------------------------------------------------------
def test_clipping_every_batch_does_not_set_adams_step():
    """4.5: 'Under Adam a clipped gradient's rescaling is largely normalised away, so the learning rate still sets the
    step: clipping changes how much each batch weighs in Adam's running averages'; the REINFORCE++ box: 'clipping
    every batch is a shared scale, which cancels; what it changes is how much a batch with an unusually large gradient
    weighs'. Checked on toy.train.Ascent (Adam, PyTorch's defaults) with gradient-norm clipping at 1.0: gradients of
    one norm far above the clip give the unclipped path; one spike among them moves the weight less once clipped."""
    import numpy as np

    from toy.train import Ascent
    start, rpp = box_of("c18-start"), box_of("c06")
    assert "the clip, not the learning rate, sets the step" not in start and "caps the longest steps" not in rpp
    assert "the learning rate still sets the step" in start and "The learning rate sets the step." in rpp
    rng = np.random.default_rng(1)
    direction = rng.normal(size=(300, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)

    def run(grads, clip=None):
        opt, theta = Ascent("adam", 1e-2), [np.zeros(3)]
        for g in grads:
            if clip is not None:
                g = g * min(1.0, clip / np.linalg.norm(g))
            theta = opt.step(theta, [g])
        return theta[0]

    big = 40.0 * direction  # every batch's norm is 40, far past the clip at 1.0
    assert np.allclose(run(big, clip=1.0), run(big), atol=1e-6)  # clipped at every step: the same path
    spiky = big.copy()
    spiky[150] *= 100.0  # one batch with an unusually large gradient
    moved = {c: float(direction[150] @ (run(spiky, c) - run(big, c))) for c in (None, 1.0)}
    assert moved[None] > 10 * abs(moved[1.0])  # unclipped, the spike weighs in Adam's moments; clipped, it does not


def test_the_engine_ratio_is_not_staleness():
    """4.5's symptom table: TRL computes the ratio 'right after sampling, verl's synchronous trainer once per batch
    before any update, both with the weights the engine sampled with: it measures the two programs' numerical
    mismatch, which fewer updates per batch cannot change'. Read at TRL f2cd577 (grpo_trainer.py: old_per_token_logps
    from self.model inside _generate_and_score_completions, then exp(old − sampling) logps) and verl b178a3c
    (ray_trainer.py: compute_rollout_correction_and_add_to_batch after _compute_old_log_prob, 'Only runs in decoupled
    mode', bypass_mode false by default): the text must not send this symptom to fewer updates."""
    start = box_of("c18-start")
    row = start.split("| engine/trainer ratio often past its bounds |")[1].split("| explained variance")[0]
    assert "fewer updates per batch cannot change" in row and "numerical mismatch" in row
    assert "the samples are off-policy beyond what the correction keeps" not in start


def test_openrlhf_kl_as_a_loss_stays_k1_whose_expected_gradient_is_zero():
    """The knob table: '--algo.kl.use_loss moves it to the loss, but the estimator stays k1 unless
    --algo.kl.estimator k3 (or k2) is passed too … As a loss on samples from the current policy k1's expected gradient
    is zero'. Derived by enumeration: for a tabular policy π_θ and samples y ~ π_θ (held fixed), the derivative of
    E_y[log π_θ'(y) − log π_ref(y)] in θ' at θ' = θ, along random directions, is zero (Σ_y π ∇log π = ∇Σ_y π = 0);
    the response-level k3 loss, q − log q − 1 with q = π_ref(y)/π_θ'(y), has a derivative a thousand times larger."""
    import numpy as np

    from toy.page import knobs
    note = knobs.KNOBS[0].openrlhf.note
    assert "the estimator stays k1 unless --algo.kl.estimator k3" in note and "expected gradient is zero" in note
    ref = toy.reference_policy()
    pi = toy.TabularPolicy.from_policy(toy.reference_policy(temperature=0.5))
    P, R = pi.response_probs(X).ravel(), ref.response_probs(X).ravel()
    rng = np.random.default_rng(0)
    h = 1e-5
    for _ in range(3):
        d = [rng.normal(size=z.shape) for z in pi.logits]

        lp, lm = (np.log(toy.TabularPolicy([z + sign * h * dz for z, dz in zip(pi.logits, d, strict=True)])
                         .response_probs(X).ravel()) for sign in (1, -1))
        k1 = float(P @ (lp - lm)) / (2 * h)
        k3 = float(P @ ((R / np.exp(lp) - np.log(R) + lp) - (R / np.exp(lm) - np.log(R) + lm))) / (2 * h)
        assert abs(k3) > 1e-4 and abs(k1) < 1e-3 * abs(k3), (k1, k3)


def test_the_start_is_scoped_and_the_verdicts_are_marked_as_reasoning():
    """'A start in each trainer's terms, for a 0/1 verifier'; 'With a learned reward model keep a β > 0 … 0.05 in the
    reward in TRL's RLOOTrainer …, 0.01 in the reward in OpenRLHF …, and in verl 0.001 … once
    algorithm.use_kl_in_reward=True' (RLOOConfig.beta, --algo.kl.init_coef and algorithm.kl_ctrl.kl_coef read at the
    pinned commits, the first two recorded in the knob table); RLOO 'the choice that follows ∇J', not 'the default';
    the verdicts 'reasoning'; why GRPOTrainer rather than RLOOTrainer; the critic's initialisation."""
    import numpy as np

    from toy.page import knobs
    start, verdict = box_of("c18-start"), box_of("c18-verdict")
    assert "A start in each trainer's terms, for a 0/1 verifier" in start
    assert "keep a $\\beta > 0$" in start and "0.05 in the reward in TRL's RLOOTrainer" in start
    assert "0.01 in the reward in OpenRLHF" in start and "in verl 0.001 (`algorithm.kl_ctrl.kl_coef`)" in start
    assert "(default 0.05) goes into the reward" in knobs.KNOBS[0].trl.note
    assert "init_coef 0.01" in knobs.KNOBS[0].openrlhf.note
    assert ": the default |" not in start and "the choice that follows $\\nabla J$" in start
    assert "no comparison with GRPO at scale" in start and "no comparison of the two at scale" in verdict
    assert "**Verdict, as reasoning, not a tested finding.**" in verdict and "our reasoning, not a tested" in start
    assert "rather than its RLOOTrainer" in start and "`beta=0.05`" in start
    assert "`--critic.model_name_or_path`" in start and "`critic.model.path`" in start
    # the mean baseline and RLOO differ by n/(n−1), one scale Adam cancels (checked in the Adam tests above): the
    # reason the TRL start may use GRPOTrainer's mean baseline for RLOO
    rewards = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    n = len(rewards)
    rloo = rewards - (rewards.sum() - rewards) / (n - 1)
    assert np.allclose(rloo, n / (n - 1) * (rewards - rewards.mean()))


def test_the_minimal_first_run_states_the_defaults_read():
    """4.5's 'a minimal first run' box: each default it states is the one read at the pinned commit (recorded with
    the names in tests/test_knobs.py, ALSO_READ): TRL's max_completion_length 512, use_vllm false, vllm_mode
    "colocate"; verl's prompt_key "prompt", both lengths 512, rollout.name ??? (required), train_batch_size 1024 and
    ppo_mini_batch_size 256, micro-batch sizes unset with the actor's error unless use_dynamic_bsz; OpenRLHF's
    input_key "input", label_key unset, max_len 2048, max_new_tokens unset, rollout and train batch sizes 1024 and
    128, micro-batch sizes 1."""
    box = box_of("c18-launch")
    assert box.startswith("```{dropdown} For practitioners: a minimal first run")
    for stated in ("`max_completion_length`, 512 by default", "`use_vllm=True` samples with vLLM (default false",
                   '`vllm_mode="colocate"`', "must be divisible by `num_generations`",
                   "`data.prompt_key` (`prompt`)", "`reward_model.ground_truth`", "`compute_score` by default",
                   "has no default (`???`)", "`data.max_prompt_length` are 512 by default",
                   "`data.train_batch_size` prompts (1024)", "`actor_rollout_ref.actor.ppo_mini_batch_size` (256)",
                   "are unset: set them", "the actor's configuration stops with an error",
                   "`--data.input_key` (`input`)", "`--data.label_key` (unset)",
                   "`--vllm.num_engines`, unset by default",
                   "`--data.max_len` (2048)", "`--rollout.max_new_tokens` (unset", "`--rollout.batch_size` (1024)",
                   "`--train.batch_size` (128)", "`--train.micro_batch_size` (1 each)"):
        assert stated in box, stated
    # the batch sizes agree with the ones the start box already quotes, and the table's notes
    start = box_of("c18-start")
    assert "`data.train_batch_size` of 1024" in start and "`actor_rollout_ref.actor.ppo_mini_batch_size` 256" in start


def test_the_44_practice_box_quotes_only_computed_numbers():
    """4.4's 'how much SFT before RL, and format rewards' box: every number is an {eval} of a value the page glues
    (so computed, and checked where the page states it); 'A copy succeeds only as often as its demonstrations do'
    recomputed (pure maximum likelihood on the page's 64 demonstrations per prompt, seed 0); R1-Zero cited; TRL's
    summed reward functions (reward_weights, default all 1.0, read at f2cd577)."""
    import json
    import re

    from toy.page import pipeline
    cells = json.loads(NB44.read_text())["cells"]
    box = "".join(next(c["source"] for c in cells if c.get("id") == "c16-format-practice"))
    glued = set(re.findall(r'toy\.glue\(\s*f?"([^"]+)"', "".join("".join(c["source"]) for c in cells
                                                                   if c["cell_type"] == "code")))
    glued |= {f"try_{b}_{k}" for b in ("sharp", "pretrained") for k in ("sft8_end", "sft8_low", "alone_end")}
    glued |= {f"rate_{k}" for k in ("base", "expert", "demos", "sft_pure", "sft")}  # glued in loops (f-strings)
    quoted = re.findall(r'toy\.quote\("([^"]+)"', box)
    assert len(quoted) >= 8 and set(quoted) <= glued, set(quoted) - glued
    bare = re.sub(r"\{eval\}`[^`]*`", "", box).replace("1.0", "").replace("4.5's", "")  # TRL's default; a section
    assert not re.search(r"(?<![\w.{])\d+\.\d+(?![\w}])", bare)  # no decimal typed by hand
    assert "deepseek2025r1" in box and "makes little difference" in box and "`reward_weights`" in box
    base = pipeline.base_policy("sharp")
    expert = toy.sft.imperfect_expert(base, "sum_to_target", success_rate=0.5)
    demos = toy.sft.demonstrations(expert, 64, rng=0)
    copy = toy.sft.success_rate(toy.sft.fit_sft(demos, base, prior_strength=0.0), "sum_to_target")
    assert copy == pytest.approx(toy.sft.demonstration_success(demos, "sum_to_target", base.length, base.n_actions),
                                 abs=1e-9)
