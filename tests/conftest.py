"""Shared pytest setup: the generic contract checks get pytest's assertion rewriting (values in failures), and SB3's
silent logger writes its per-model folders under pytest's temporary directory instead of leaving them in /tmp."""

import pytest

pytest.register_assert_rewrite("tests.contract")


@pytest.fixture(autouse=True, scope="session")
def _sb3_log_folders(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
        yield
