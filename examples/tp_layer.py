"""A small tensor/expert-parallel layer with the hand-rolled guards pg-bot looks for (written for pg-bot's docs)."""

import torch

import deepspeed.comm as dist


def _tp_active(group):
    return group is not None and dist.get_world_size(group=group) > 1


def reduce_experts(tokens, ep_group=None):
    # Unguarded: with ep_group=None this reduces over the WORLD.
    dist.all_reduce(tokens, group=ep_group)
    return tokens


class RowParallel(torch.nn.Module):
    def __init__(self, mp_group=None, fuse=True):
        super().__init__()
        self.mp_group = mp_group
        self.fuse = fuse
        self.tp_world_size = dist.get_world_size(group=mp_group)

    def forward(self, x):
        if self.fuse and self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1:
            dist.all_reduce(x, group=self.mp_group)
        if self.tp_world_size > 1:
            dist.all_reduce(x.contiguous(), group=self.mp_group)
        return x

    def backward_hook(self, grad):
        if self.mp_group is None or dist.get_world_size(self.mp_group) == 1:
            return grad
        dist.all_reduce(grad, group=self.mp_group)
        return grad
