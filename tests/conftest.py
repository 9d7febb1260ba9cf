"""Shared pytest setup: the generic contract checks get pytest's assertion rewriting (values in failures)."""

import pytest

pytest.register_assert_rewrite("tests.contract")
