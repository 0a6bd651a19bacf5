"""A headless Chromium for the console's page tests, driven by Playwright.

Debian's ``chromium`` (what ``.ci/run`` installs) is launched through Playwright's
``executable_path``, so no browser is downloaded. Without Playwright or a Chromium binary the
tests that take ``browser`` skip.
"""

import shutil

import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    if executable is None:
        pytest.skip(f"no Chromium binary ({', '.join(CHROMIUM_NAMES)}) for the console's page")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()
