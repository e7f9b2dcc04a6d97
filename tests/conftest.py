"""Fixtures shared by the unit and parity tests."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(params=[torch.float32, torch.float64], ids=["float32", "float64"])
def dtype(request) -> torch.dtype:
    return request.param
