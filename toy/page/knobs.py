"""The toy's knobs in the trainers' own words (issue 51): each control and method of the book beside its setting in
Hugging Face TRL, verl and OpenRLHF, as data, and as one static, folded HTML table for the practitioners' box of 4.5.

Every setting name was read in its project's code at the commit in ``PROJECTS`` (the file is in each ``Setting``);
``tests/test_knobs.py`` holds its own record of the same names, files and commits. A name that a later version renames
will be stale here: the table says at which version it was read.

Conventions: verl's settings are Hydra keys, read in ``verl/trainer/config/_generated_ppo_trainer.yaml`` (the whole
PPO configuration flattened into one file: ``ppo_trainer.yaml`` with ``actor/actor.yaml``, ``rollout/rollout.yaml``
and ``algorithm/rollout_correction.yaml`` in place), except ``algorithm.filter_groups``, a field of the dataclass in
``verl/trainer/config/algorithm.py`` that only the DAPO recipe (``recipe/dapo``) reads; OpenRLHF's are command-line
flags of ``openrlhf/cli/train_ppo_ray.py``; TRL's are fields of ``GRPOConfig`` (``trl/trainer/grpo_config.py``)
unless the text names ``RLOOConfig`` or the experimental ``PPOConfig``.
"""

from __future__ import annotations

import html
from typing import NamedTuple

from .. import checks


class Project(NamedTuple):
    """One trainer, at the version its settings were read."""

    name: str
    repository: str  # owner/name on GitHub
    version: str  # git describe of the commit read
    commit: str  # the full commit hash


PROJECTS = {
    "TRL": Project("TRL", "huggingface/trl", "v1.9.0-26-gf2cd577", "f2cd57710ae345ea6428ae95363267fcf38a3dc8"),
    "verl": Project("verl", "volcengine/verl", "v0.7.0-125-gb178a3c", "b178a3cd56f58b2d502255daba591e92833930a7"),
    "OpenRLHF": Project("OpenRLHF", "OpenRLHF/OpenRLHF", "v0.11.0", "3c3be6234e0cb353e76bb8019947db9dfe99fca7"),
}
"""The three trainers, each at the commit read (verl's snapshot is the oldest: January 2026)."""

TRL_GRPO = "trl/trainer/grpo_config.py"
TRL_RLOO = "trl/trainer/rloo_config.py"
TRL_PPO = "trl/experimental/ppo/ppo_config.py"
VERL_YAML = "verl/trainer/config/_generated_ppo_trainer.yaml"
VERL_FILTER = "verl/trainer/config/algorithm.py"
ORLHF_CLI = "openrlhf/cli/train_ppo_ray.py"
ORLHF_LOSS = "openrlhf/models/loss.py"


class Setting(NamedTuple):
    """A setting of one trainer: the names to set (as that project spells them), what they do there, and the file
    where the names were read."""

    names: tuple[str, ...]
    note: str
    file: str


class Knob(NamedTuple):
    """One control or method of the book, and its setting in each trainer (``None``: the trainer has none)."""

    knob: str
    book: str  # what the book does with it, and where
    trl: Setting | None
    verl: Setting | None
    openrlhf: Setting | None


A = "actor_rollout_ref.actor."
KNOBS = (
    Knob("β and where the KL goes",
         "the toy's training puts β·log(π/π_ref) into the reward, for every method (4.5); GRPO as published puts a k3 "
         "term into the loss. The estimators of a token's KL, with q = π_ref/π: k1 = −log q, k2 = ½(log q)², "
         "k3 = q − log q − 1 (never negative)",
         Setting(("beta",), "GRPOTrainer: KL in the loss (k3), default 0.0, no KL at all; RLOOConfig's beta (default "
                 "0.05) goes into the reward; the experimental PPOConfig's kl_coef too", TRL_GRPO),
         Setting(("algorithm.use_kl_in_reward", "algorithm.kl_penalty", "algorithm.kl_ctrl.kl_coef",
                  A + "use_kl_loss", A + "kl_loss_coef", A + "kl_loss_type"),
                 'in the reward with use_kl_in_reward (estimator kl_penalty, default "kl", k1; coefficient '
                 "kl_ctrl.kl_coef), in the loss with use_kl_loss (kl_loss_type, default low_var_kl: k3, clipped to "
                 "±10); both off by default", VERL_YAML),
         Setting(("--algo.kl.init_coef", "--algo.kl.use_loss", "--algo.kl.estimator"),
                 "on by default: init_coef 0.01, in the reward (estimator k1); --algo.kl.use_loss moves it to the "
                 "loss, but the estimator stays k1 unless --algo.kl.estimator k3 (or k2) is passed too: the command "
                 "line only prints a recommendation. As a loss on samples from the current policy k1's expected "
                 "gradient is zero (E_π[∇log π] = 0), so that KL term does nothing on average. Set init_coef to 0 "
                 "to match TRL's and verl's defaults, which have no KL",
                 ORLHF_CLI)),
    Knob("ε and ε_high (the clip)",
         "PPO's clip and DAPO's clip-higher, 4.3's trust-region explorer",
         Setting(("epsilon", "epsilon_high"), "epsilon_high defaults to epsilon; the same names in RLOOConfig, "
                 "where they clip one ratio per response (its token ratios' product), not each token's", TRL_GRPO),
         Setting((A + "clip_ratio", A + "clip_ratio_low", A + "clip_ratio_high", A + "clip_ratio_c"),
                 "all 0.2 by default; clip_ratio_c is the dual clip for negative advantages (4.3), on by default "
                 "(3.0)", VERL_YAML),
         Setting(("--actor.eps_clip", "--actor.eps_clip_low_high", "--actor.dual_clip"),
                 "eps_clip 0.2; eps_clip_low_high takes the two bounds (default: eps_clip for both); dual_clip off "
                 "by default (None)", ORLHF_CLI)),
    Knob("group size n",
         "the n of every critic-free method (4.5's explorers; 4.4's wait for a first success)",
         Setting(("num_generations",), "per prompt; also in RLOOConfig", TRL_GRPO),
         Setting(("actor_rollout_ref.rollout.n",), "default 1: set it above 1 for a group baseline", VERL_YAML),
         Setting(("--rollout.n_samples_per_prompt",), "default 1; the group estimators require more", ORLHF_CLI)),
    Knob("the advantage estimator",
         "REINFORCE with the mean baseline, RLOO, ReMax, GRPO, Dr. GRPO, PPO with GAE (4.5); REINFORCE++ (no group "
         "baseline, usually one sample per prompt; advantages whitened over the batch) and REINFORCE++-baseline "
         "(4.5's REINFORCE++ box)",
         Setting((), "one trainer per method: GRPOTrainer (GRPO, Dr. GRPO), RLOOTrainer, and an experimental "
                 "PPOTrainer with a value model", TRL_GRPO),
         Setting(("algorithm.adv_estimator",), "gae (default), grpo, rloo, remax, reinforce_plus_plus "
                 "(REINFORCE++), reinforce_plus_plus_baseline (REINFORCE++-baseline), among others (the values: "
                 "AdvantageEstimator in verl/trainer/ppo/core_algos.py)", VERL_YAML),
         Setting(("--algo.advantage.estimator",), "gae (default), rloo, group_norm (GRPO), dr_grpo (the group "
                 "mean alone: the book's mean baseline), reinforce (REINFORCE++: no group baseline, returns whitened "
                 "over the batch; not the mean baseline), reinforce_baseline (REINFORCE++-baseline)", ORLHF_CLI)),
    Knob("std normalisation: GRPO against Dr. GRPO",
         "GRPO divides by the group's std, Dr. GRPO does not (4.5's table and explorers)",
         Setting(("scale_rewards",), '"group" (default: GRPO), "none" (with loss_type "dr_grpo": Dr. GRPO), '
                 '"batch" (one std over the batch)',
                 TRL_GRPO),
         Setting(("algorithm.norm_adv_by_std_in_grpo",), "True by default; False, with loss_agg_mode "
                 '"seq-mean-token-sum-norm", is Dr. GRPO', VERL_YAML),
         Setting(("--algo.advantage.estimator", "--algo.advantage.no_std_norm"),
                 "group_norm divides by the group's std, dr_grpo does not; dr_grpo changes only the advantage, its "
                 "loss stays the token mean (not Dr. GRPO's constant divisor); no_std_norm drops the batch std of "
                 "gae, reinforce and reinforce_baseline", ORLHF_CLI)),
    Knob("loss aggregation",
         "how a batch's token losses become one number: a mean over all its tokens, a mean over each response's "
         "tokens then over responses, or a sum divided by a constant. Every response in the training runs has four "
         "tokens, so these agree with the toy's sum over tokens up to a constant factor, a step size under plain "
         "steps (4.5)",
         Setting(("loss_type",), '"dapo" (default: token mean over the global batch), "grpo" (mean over each '
                 'response\'s tokens, then over responses), "dr_grpo" (token sum over a constant), "bnpo", '
                 'among others; '
                 "RLOOTrainer averages one loss per response", TRL_GRPO),
         Setting((A + "loss_agg_mode",), '"token-mean" (default), "seq-mean-token-sum", "seq-mean-token-mean", '
                 '"seq-mean-token-sum-norm"', VERL_YAML),
         Setting((), "no flag: token mean over the batch (PolicyLoss's token_level_loss), for dr_grpo too; a mean "
                 "per response for --actor.policy_loss_type gspo", ORLHF_LOSS)),
    Knob("γ and λ",
         "γ = 1 (4.3's discount explorer); λ trades bias for variance inside GAE (4.3, 4.5)",
         Setting(("gamma", "lam"), "in the experimental PPOConfig only (defaults 1.0 and 0.95); GRPO and RLOO have "
                 "no discount", TRL_PPO),
         Setting(("algorithm.gamma", "algorithm.lam"), "defaults 1.0 and 1.0; one λ for the critic's targets and "
                 "the policy's advantages", VERL_YAML),
         Setting(("--algo.advantage.gamma", "--algo.advantage.lambd"), "defaults 1 and 1, one λ for both; the "
                 "group estimators force γ = 1", ORLHF_CLI)),
    Knob("epochs per batch",
         "the toy's epochs (the second pass on is clipped; 4.3's trust region)",
         Setting(("num_iterations",), "default 1 (the μ of GRPO); the experimental PPOConfig has num_ppo_epochs",
                 TRL_GRPO),
         Setting((A + "ppo_epochs",), "default 1", VERL_YAML),
         Setting(("--train.max_epochs",), "default 1", ORLHF_CLI)),
    Knob("the critic's warm-up",
         "a learned critic needs data before its values help (4.3's critic figure; a box beside it)",
         Setting((), "no warm-up setting in the experimental PPOConfig: critic and policy train from the first step",
                 TRL_PPO),
         Setting(("trainer.critic_warmup",), "training steps (batches) that train only the critic before the "
                 "policy moves; default 0",
                 VERL_YAML),
         Setting(("--critic.freezing_steps",), "freezes the actor for its first training steps (batches) to let the "
                 "critic warm up; default −1 (none)", ORLHF_CLI)),
    Knob("PPO's critic: value clip, learning rate, decoupled λ",
         "the toy's learned critic is a table fitted by plain averaging (4.3's critic figure); VC-PPO fits the "
         "critic's targets with λ = 1 and the policy's advantages with λ = 0.95 (the critic box in 4.3)",
         Setting(("cliprange_value", "vf_coef", "learning_rate"),
                 "experimental PPOConfig: value clip 0.2; policy and value model share one AdamW (learning_rate, "
                 "default 3e-6), vf_coef (0.1) weighs the value loss; no decoupled λ", TRL_PPO),
         Setting(("critic.cliprange_value", "critic.optim.lr", A + "optim.lr"),
                 "value clip 0.5; critic learning rate 1e-5 against the actor's 1e-6; no decoupled λ (one "
                 "algorithm.lam)", VERL_YAML),
         Setting(("--critic.value_clip", "--critic.adam.lr", "--actor.adam.lr"),
                 "value clip 0.5; critic learning rate 9e-6 against the actor's 1e-6; no decoupled λ (one lambd)",
                 ORLHF_CLI)),
    Knob("engine-vs-trainer importance weights",
         "not in the toy (one policy, no inference engine); 4.3's staleness figure shows why the weights are bounded",
         Setting(("vllm_importance_sampling_correction", "vllm_importance_sampling_mode"),
                 'on by default when sampling with vLLM; mode "sequence_mask" by default, "token_truncate" and '
                 '"sequence_truncate" clip instead', TRL_GRPO),
         Setting(("algorithm.rollout_correction.rollout_is", "algorithm.rollout_correction.rollout_is_threshold",
                  "algorithm.rollout_correction.rollout_rs", "actor_rollout_ref.rollout.calculate_log_probs"),
                 'off in the YAML (null; the RolloutCorrectionConfig dataclass alone defaults to "sequence"); '
                 '"token" or "sequence" weights truncated at rollout_is_threshold (default 2.0); rollout_rs masks '
                 "(rejects) instead; needs calculate_log_probs=True (default false), which verl's docs mark "
                 "required", VERL_YAML),
         Setting(("--algo.advantage.is_correction_enable", "--algo.advantage.is_correction_type",
                  "--algo.advantage.is_correction_threshold"),
                 "off by default; tis (default type: per-token weights clamped to the bounds), icepop (tokens "
                 "outside masked), seq-mask-tis (responses outside masked; the kept ones' per-token weights are "
                 "not clamped); bounds default 0.5 and 5.0", ORLHF_CLI)),
    Knob("DAPO's dynamic sampling",
         "drop groups whose rewards are all equal and sample again (the box beside 4.5's group explorer)",
         None,
         Setting(("algorithm.filter_groups.enable", "algorithm.filter_groups.metric"),
                 "read only by verl's DAPO recipe (python3 -m recipe.dapo.main_dapo), not by main_ppo; off unless "
                 "set (filter_groups defaults to None). At this commit recipe/ is a git submodule "
                 "(verl-project/verl-recipe, pinned at 21892b9): it needs git submodule update --init, and a pip "
                 "install of verl does not include it", VERL_FILTER),
         Setting(("--algo.dynamic_filtering_enable", "--algo.dynamic_filtering_range"),
                 "keeps groups whose mean reward lies strictly inside the range", ORLHF_CLI)),
)
"""The table's rows, in the order of the issue that asked for it."""

TRAINERS = ("trl", "verl", "openrlhf")
"""The trainer fields of ``Knob``, in the order of ``PROJECTS``."""


def settings(project: str) -> dict[str, tuple[str, ...]]:
    """Every setting name of one trainer (a key of ``PROJECTS``), grouped by the file where it was read."""
    field = dict(zip(PROJECTS, TRAINERS, strict=True))[checks.choose("project", project, PROJECTS).name]
    out: dict[str, tuple[str, ...]] = {}
    for knob in KNOBS:
        s = getattr(knob, field)
        if s is not None and s.names:
            out[s.file] = out.get(s.file, ()) + tuple(n for n in s.names if n not in out.get(s.file, ()))
    return out


class KnobTable:
    """The table as static HTML, folded in a ``<details>`` block (its style inline, no script), like the fate table's
    ``<div>`` with its ``<style>`` first."""

    def __init__(self, knobs=KNOBS, uid: str = "knobs"):
        if isinstance(knobs, (str, bytes)) or not isinstance(knobs, (list, tuple)) or not all(
                isinstance(k, Knob) for k in knobs):
            raise checks.fail("knobs", "a sequence of toy.page.knobs.Knob", knobs)
        self.knobs = tuple(knobs)
        self.uid = checks.text("uid", uid)

    def html(self) -> str:
        uid, esc = self.uid, html.escape
        css = (f".{uid} table {{ border-collapse: collapse; width: 100%; font-size: 0.85em; }} "
               f".{uid} th, .{uid} td {{ border: 1px solid #ddd; padding: 0.3em 0.4em; text-align: left; "
               "vertical-align: top; overflow-wrap: anywhere; } "
               f".{uid} th {{ background: #eee; }} .{uid} code {{ font-size: 0.95em; }} "
               f".{uid} summary {{ cursor: pointer; font-weight: 600; }} "
               f"html[data-theme=dark] .{uid} {{ color: var(--pst-color-text-base, #ced6dd); }} "
               f"html[data-theme=dark] .{uid} th {{ background: #2b2b2b; }} "
               f"html[data-theme=dark] .{uid} th, html[data-theme=dark] .{uid} td {{ border-color: #555; }}")
        heads = ["In the book"] + [f"{p.name} ({p.version})" for p in PROJECTS.values()]
        rows = []
        for k in self.knobs:
            cells = [f"<b>{esc(k.knob)}</b>: {esc(k.book)}"]
            for field in TRAINERS:
                s = getattr(k, field)
                if s is None:
                    cells.append("none")
                    continue
                names = ", ".join(f"<code>{esc(n)}</code>" for n in s.names)
                cells.append((names + ": " if names else "") + esc(s.note))
            rows.append("<tr>" + "".join(f'<td data-label="{esc(h)}">{c}</td>'
                                         for h, c in zip(heads, cells, strict=True)) + "</tr>")
        versions = "; ".join(f"{p.name} {p.repository} at {p.commit[:7]}" for p in PROJECTS.values())
        return (f'<div class="toy-knobs {uid}"><style>{css}</style><details><summary>For practitioners: the book\'s '
                "knobs in TRL, verl and OpenRLHF</summary><table><thead><tr>"
                + "".join(f"<th>{esc(h)}</th>" for h in heads) + "</tr></thead><tbody>" + "".join(rows)
                + f"</tbody></table><p>Names read in each project's code: {esc(versions)}. A later version may rename "
                "them: OpenRLHF's dotted flags date from commit ed62d0e (v0.10.2, April 2026); scripts for v0.10.1 and "
                "earlier use flat names (--init_kl_coef, --advantage_estimator, --eps_clip, "
                "--n_samples_per_prompt, --use_kl_loss, --kl_estimator), which this version rejects. "
                "verl's names are Hydra configuration keys (set as key=value on the command line), "
                "OpenRLHF's are command-line flags, TRL's are fields of a config class.</p></details></div>")

    def _repr_html_(self) -> str:
        return self.html()


def knob_table() -> KnobTable:
    """The practitioners' table, folded (displays as HTML)."""
    return KnobTable()
