"""Gradient synchronisation helpers for pg-bot's example pull request."""

import torch

import deepspeed.comm as dist


def average(t: torch.Tensor, group=None) -> torch.Tensor:
    return t / max(dist.get_world_size(group=group), 1)
