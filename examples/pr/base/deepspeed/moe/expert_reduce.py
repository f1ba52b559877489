"""Expert-parallel reductions: a small module written for pg-bot's example pull request."""

import torch

import deepspeed.comm as dist


class ExpertReducer:
    def __init__(self, mp_group=None, ep_group=None):
        self.mp_group = mp_group
        self.ep_group = ep_group

    def reduce_gate(self, logits: torch.Tensor) -> torch.Tensor:
        # Already on master before this PR: the review counts it, but does not comment on it.
        if self.ep_group is not None and dist.get_world_size(group=self.ep_group) > 1:
            dist.all_reduce(logits, group=self.ep_group)
        return logits
