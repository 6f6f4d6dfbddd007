# SPDX-License-Identifier: BSD-3-Clause
"""Measuring: the run plan and its options, building and launching the engine, refining sizes, recording the run."""
