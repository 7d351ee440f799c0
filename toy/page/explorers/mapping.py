"""Section 4.1's explorer beside Figure 4.1: the toy's MDP as a tree of prefixes (``toy.prefix_tree``)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ... import prefix_tree
from ...policy import check_prompt, reference_policy
from ...rewards import REWARDS
from ...vocab import RESPONSE_LENGTH, VOCAB_SIZE
from ..explorer import Explorer, dropdown, reused
from ..figures import base_layout

REWARD_LABELS = {name: name.replace("_", " ") for name in REWARDS}
TOKENS = {a: str(a) for a in range(VOCAB_SIZE)}
ROOT_Y = (VOCAB_SIZE - 1) / 2


VALUE_SCALE = [[0.0, "#c6dbef"], [0.5, "#6baed6"], [1.0, "#2171b5"]]
"""V(s) from light to mid blue: plotly's "Blues" without its navy end, which vanishes on the dark page; a node's
light fill reads on the dark page, its dark outline on the light one (each at least 3:1)."""


def _size(p):
    """Marker size from a reach probability: area grows with P, never vanishing."""
    return 6 + 30 * np.sqrt(np.asarray(p, dtype=float))


@reused
def tree_explorer(prompt: int = 2) -> Explorer:
    """One path through the prefix tree of ``prompt``: each state on it with its K children (edges are actions,
    node size P(s), node colour V(s)), and the K complete responses at its end, rewarded or not."""
    prompt = check_prompt(prompt)
    policy = reference_policy()
    L, K = RESPONSE_LENGTH, VOCAB_SIZE

    def compute(state):
        path = (state["y1"], state["y2"], state["y3"])
        view = prefix_tree.path_view(policy, state["reward"], prompt, path)
        out = {}
        parents = [ROOT_Y] + [float(a) for a in path]
        for t in range(L):
            out[f"edge{t}"] = np.ravel([[parents[t], a] for a in range(K)])
        out["state_size"] = np.concatenate([[_size(1.0)], _size(view.reach[:-1].ravel())])
        out["state_v"] = np.concatenate([[view.path_values[0]], view.values[:-1].ravel()])
        out["path_y"] = np.array(parents)
        hit = view.leaf_rewards > 0
        out["leaf_hit"] = np.where(hit, 16.0, 0.0)
        out["leaf_miss"] = np.where(hit, 0.0, 12.0)
        out["leaf_r"] = view.leaf_rewards
        out["v_path"] = [view.path_values[-1]]
        out["p_path"] = [view.reach[-2][path[-1]]]
        out["n_hit"] = [float(hit.sum())]
        return out

    fig = go.Figure()
    for t in range(L):
        fig.add_scatter(x=[t, t + 1] * K, y=[0.0] * (2 * K), mode="lines", name="actions: one edge per token",
                        legendgroup="edges", showlegend=t == 0, line=dict(color="#8c8c8c", width=1.5),
                        hoverinfo="skip")
    xs = [0] + [t + 1 for t in range(L - 1) for _ in range(K)]
    ys = [ROOT_Y] + [float(a) for _ in range(L - 1) for a in range(K)]
    fig.add_scatter(x=xs, y=ys, mode="markers", name="states: size P(s_t), colour V(s_t)",
                    marker=dict(symbol="circle", size=10, color=ys, colorscale=VALUE_SCALE, cmin=0, cmax=1, opacity=1,
                                line=dict(color="#1f3f66", width=1),
                                colorbar=dict(title=dict(text="V(s)", side="right"), thickness=10, len=0.6,
                                              outlinecolor="#6b6b6b", outlinewidth=1)),
                    customdata=ys, hovertemplate="depth %{x}, token %{y}: V = %{customdata:.3f}<extra>state</extra>")
    fig.add_scatter(x=list(range(L)), y=[ROOT_Y] * L, mode="markers", name="the path you chose",
                    marker=dict(symbol="diamond-open", size=24, color="#d62728", line=dict(width=2.5)),
                    hoverinfo="skip")
    leaf_x, leaf_y = [L] * K, [float(a) for a in range(K)]
    fig.add_scatter(x=leaf_x, y=leaf_y, mode="markers", name="complete response, rewarded",
                    marker=dict(symbol="star", size=16, color="#2ca02c", opacity=1), customdata=leaf_y,
                    hovertemplate="last token %{y}: r = %{customdata:g}<extra>rewarded</extra>")
    fig.add_scatter(x=leaf_x, y=leaf_y, mode="markers", name="complete response, r = 0",
                    marker=dict(symbol="x-thin-open", size=12, color="#555", line=dict(width=2), opacity=1),
                    hovertemplate="last token %{y}: r = 0<extra>not rewarded</extra>")
    # The numbers behind the figure: the chosen path's five completions and their rewards (the edges, the states'
    # positions and the path's markers are drawing, not numbers; V and P are in the title)
    for trace in fig.data[:L + 2]:
        trace.meta = {"table": {"skip": True}}
    fig.data[L + 2].meta = {"table": {"values": "customdata", "name": "reward r(x, y)", "label": "{y}",
                                      "corner": "last token of the completion",
                                      "caption": f"The chosen path's 5 completions, prompt x = {prompt}: their reward "
                                                 "(reward units; the path's V and probability are in the title)"}}
    fig.data[L + 3].meta = {"table": {"skip": True}}
    fig.update_xaxes(title_text="depth t: tokens written so far", tickvals=list(range(L + 1)),
                     range=[-0.4, L + 0.4])
    fig.update_yaxes(title_text="token of the edge into the node", tickvals=list(range(K)), range=[-0.6, K - 0.4])
    base_layout(fig, "", height=520)
    fig.update_layout(legend=dict(itemsizing="constant"))
    deps_path = ("y1", "y2", "y3")
    outputs = {"edge0": (), "edge1": ("y1",), "edge2": ("y1", "y2"), "edge3": deps_path,
               "state_size": ("y1", "y2"), "state_v": ("reward", "y1", "y2"), "path_y": deps_path,
               "leaf_hit": ("reward",) + deps_path, "leaf_miss": ("reward",) + deps_path,
               "leaf_r": ("reward",) + deps_path, "v_path": ("reward",) + deps_path, "p_path": deps_path,
               "n_hit": ("reward",) + deps_path}
    return Explorer(
        title="The toy's MDP as a tree of prefixes",
        controls=[dropdown("reward", "Reward", REWARD_LABELS, "sum_to_target"),
                  dropdown("y1", "Token 1 of the path", TOKENS, 1),
                  dropdown("y2", "Token 2 of the path", TOKENS, 2),
                  dropdown("y3", "Token 3 of the path", TOKENS, 3)],
        outputs=outputs, compute=compute, figure=fig,
        traces=[(t, "y", [f"edge{t}"]) for t in range(L)]
        + [(L, "marker.size", ["state_size"]), (L, "marker.color", ["state_v"]), (L, "customdata", ["state_v"]),
           (L + 1, "y", ["path_y"]), (L + 2, "marker.size", ["leaf_hit"]), (L + 2, "customdata", ["leaf_r"]),
           (L + 3, "marker.size", ["leaf_miss"])],
        layout={"title.text": f"x = {prompt} · {{y1}} {{y2}} {{y3}}: reached with probability {{p_path:.4f}}, "
                              "V = {v_path:.3f}; {n_hit:.0f} of its 5 completions rewarded"},
        caption=f"Prompt {prompt}, pretrained π_ref at τ = 1. Each column is a depth of the tree; a node is the state "
                "reached by the edges into it (the root is the prompt). Only the children of the states on the "
                f"chosen path are drawn: the whole tree has {K}^t states at depth t and {K ** L} leaves.",
    )


EXPLORERS = {"prefix_tree": tree_explorer}
"""Section 4.1's explorers by name, besides Figure 4.1 (merged into ``toy.explorers.ALL``)."""
