"""GIF frame timing (issue 38): browsers play delays under 20 ms as 100 ms, so ``write_gif`` never writes one."""

import warnings

import numpy as np
import pytest
from PIL import Image

from jaxbody.viz.animation import write_gif


def frame_delays(path):
    with Image.open(path) as image:
        delays = []
        for k in range(image.n_frames):
            image.seek(k)
            delays.append(image.info["duration"])
    return delays


def frames():
    return [np.full((8, 8, 3), 40 * k, np.uint8) for k in range(3)]


def test_real_time_delay_is_kept(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_gif(tmp_path / "a.gif", frames(), fps=25)
    assert frame_delays(tmp_path / "a.gif") == [40, 40, 40]


def test_too_short_a_delay_is_raised_to_20_ms_with_a_warning(tmp_path):
    with pytest.warns(UserWarning, match=r"100 frames per second is a 10.0 ms GIF delay.*2x slower"):
        write_gif(tmp_path / "b.gif", frames(), fps=100)
    assert frame_delays(tmp_path / "b.gif") == [20, 20, 20]


def test_delays_not_a_multiple_of_10_ms_keep_real_time_on_average(tmp_path):
    # GIF stores delays in 10 ms steps: 30 fps (33.3 ms) must not become 30 ms (1.1x fast) or 40 ms (1.2x slow)
    images = [np.zeros((8, 8, 3), np.uint8) for _ in range(9)]
    for k, image in enumerate(images):
        image[k % 8, k // 8 :] = 255   # distinct frames (the writer merges identical ones)
    write_gif(tmp_path / "c.gif", images, fps=30)
    delays = frame_delays(tmp_path / "c.gif")
    assert sorted(set(delays)) == [30, 40] and sum(delays) == 300
    ends = np.cumsum(delays)
    assert np.max(np.abs(ends - 1000 * np.arange(1, 10) / 30)) <= 5
