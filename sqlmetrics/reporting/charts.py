"""The report's charts, drawn by matplotlib as inline SVG: no JavaScript, nothing to fetch.

Each function returns one ``<svg>`` element as text. Text stays text (``svg.fonttype: none``):
the page is smaller, the browser's font draws it, and the numbers can be searched and tested.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import re
import textwrap
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.reporting.common import shortened

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Colour-blind-safe (Okabe-Ito), in the order models appear.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
STYLE: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "sqlmetrics-report",  # the same ids on every run: reproducible pages
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


# Room (inches: left, bottom, right, top) for the furniture of a chart whose tick labels are
# numbers (curves, ECDFs): a one-line title, axis labels, ticks up to 6 characters. Fixed
# margins spare the constrained layout's cost, most of a chart's drawing time (docs/benchmark.md,
# "The report"); charts labelled with names of any length (segments, models) keep it.
NUMBERS_MARGINS = (0.75, 0.5, 0.15, 0.3)


def _figure(
    width: float = 6.0, height: float = 3.2, margins: tuple[float, ...] | None = None
) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    if margins is None:
        figure = Figure(figsize=(width, height), layout="constrained")
    else:
        left, bottom, right, top = margins
        figure = Figure(figsize=(width, height))
        figure.subplots_adjust(
            left=left / width,
            bottom=bottom / height,
            right=1 - right / width,
            top=1 - top / height,
        )
    return figure, figure.add_subplot()


def _svg(figure: Figure) -> str:
    # Called inside _style(): savefig reads svg.fonttype and svg.hashsalt from it.
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    # The XML prolog and DOCTYPE belong to a file, not to an element inside HTML; the RDF
    # metadata names URLs (never fetched, but a page without any is simpler to check).
    return _METADATA.sub("", text[text.index("<svg") :])


def colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def curves(
    title: str,
    metric: str,
    ks: Sequence[int],
    lines: Mapping[str, Sequence[float]],
    bands: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    marked_k: int | None = None,
) -> str:
    """metric@k against k, a line per model, and its interval band where there is one."""
    with _style():
        figure, axes = _figure(margins=NUMBERS_MARGINS)
        for index, (model, values) in enumerate(lines.items()):
            # the gids name the drawn elements in the SVG, for tests and readers of the source
            axes.plot(
                ks,
                values,
                label=shortened(model),
                color=colour(index),
                linewidth=1.6,
                gid=f"line_{index}",
            )
            if model in bands:
                low, high = bands[model]
                axes.fill_between(
                    ks, low, high, color=colour(index), alpha=0.2, linewidth=0, gid=f"band_{index}"
                )
        if marked_k is not None:
            axes.axvline(marked_k, color="#888888", linestyle=":", linewidth=1)
        axes.set_title(title)
        axes.set_xlabel("k (cutoff)")
        axes.set_ylabel(f"{metric}@k")
        if max(ks) > min(ks):  # one cutoff alone: matplotlib widens the axis itself
            axes.set_xlim(min(ks), max(ks))
        axes.legend(title="model", fontsize=8)
        return _svg(figure)


def grouped_bars(
    title: str,
    label: str,
    segments: Sequence[str],
    values: Mapping[str, Sequence[float]],
    small: Sequence[bool],
    intervals: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    xlabel: str = "segment (users in the population; hatched: small, read with care)",
    legend: str = "model",
) -> str:
    """One group of bars per segment (in the order given), a bar per model, with its interval
    as an error bar where there is one; small segments hatched and named so. The groups can
    be other than segments (``xlabel``), the bars other than models (``legend``)."""
    with _style():
        figure, axes = _figure(width=max(6.0, 1.0 + 0.9 * len(segments)))
        count = max(len(values), 1)
        width = 0.8 / count
        for index, (model, heights) in enumerate(values.items()):
            offsets = [s + (index - (count - 1) / 2) * width for s in range(len(segments))]
            errors = None
            if intervals and model in intervals:
                low, high = intervals[model]
                errors = [
                    [h - lo for h, lo in zip(heights, low, strict=True)],
                    [hi - h for h, hi in zip(heights, high, strict=True)],
                ]
            bars = axes.bar(
                offsets,
                heights,
                width,
                label=shortened(model),
                color=colour(index),
                yerr=errors,
                capsize=2,
            )
            for bar, is_small in zip(bars, small, strict=True):
                if is_small:
                    bar.set_hatch("///")
                    bar.set_alpha(0.5)
        axes.set_xticks(range(len(segments)), segments)
        axes.set_title(title)
        axes.set_xlabel(xlabel)
        axes.set_ylabel(label)
        axes.legend(title=legend, fontsize=8)
        return _svg(figure)


def bars(title: str, label: str, values: Mapping[str, float]) -> str:
    """A bar per model: a beyond-accuracy metric."""
    with _style():
        figure, axes = _figure(width=4.5, height=2.6)
        models = list(values)
        places = range(len(models))  # by position: two names may shorten alike
        drawn = axes.bar(places, [values[m] for m in models], color=[colour(i) for i in places])
        # a long name on lines of its own, not across the neighbours' bars
        axes.set_xticks(places, [textwrap.fill(shortened(m), 20) for m in models])
        axes.bar_label(drawn, fmt="%.4g", fontsize=8)
        axes.set_title(title)
        axes.set_xlabel("model")
        axes.set_ylabel(label)
        return _svg(figure)


def ecdf(title: str, label: str, quantiles: Mapping[str, Sequence[float]]) -> str:
    """The empirical CDF of the per-user values of each model, from their quantiles at evenly
    spaced levels 0 .. 1 (evaluate's ``distributions``): the share of users at or below each
    value (the height at 0 is the share of users at 0, to a step)."""
    import numpy as np

    with _style():
        figure, axes = _figure(margins=NUMBERS_MARGINS)
        for index, (model, values) in enumerate(quantiles.items()):
            data = np.asarray(values, dtype=float)
            if not len(data) or np.isnan(data).all():
                continue
            levels = np.linspace(0, 1, len(data))
            # the last level at each value: the share of users at or below it
            last = np.append(data[1:] != data[:-1], True)
            axes.step(data[last], levels[last], where="post", label=model, color=colour(index))
        axes.set_title(title)
        axes.set_xlabel(f"{label} of a user")
        axes.set_ylabel("share of users at or below")
        axes.set_ylim(0, 1.02)
        axes.legend(title="model", fontsize=8)
        return _svg(figure)


MISSING = "the report draws its charts with matplotlib: pip install 'sqlmetrics[report]'"


def import_in_background() -> threading.Thread:
    """Imports the modules that draw the charts (~0.3 s) in a thread of its own, started
    before the report's evaluate call: DuckDB runs the query without holding the GIL, so the
    import overlaps it (bench/report_page.py). Refuses at once, before any query, when
    matplotlib is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        raise SqlmetricsError(MISSING)

    def load() -> None:
        with contextlib.suppress(ImportError):  # _style() reports it when drawing
            importlib.import_module("matplotlib.figure")
            importlib.import_module("matplotlib.backends.backend_svg")

    thread = threading.Thread(target=load, name="sqlmetrics-report-import", daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def _style() -> Iterator[None]:
    """matplotlib's settings for drawing and saving, restored afterwards."""
    try:
        import matplotlib
    except ImportError as error:
        raise SqlmetricsError(MISSING) from error

    with matplotlib.rc_context(cast(Any, STYLE)):
        yield


_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
# Where an SVG defines an id or refers to one: id="x", url(#x), xlink:href="#x".
_REFERENCE = re.compile(r'(\bid="|url\(#|xlink:href="#)')


def svg_ids_unique(svgs: Sequence[str]) -> list[str]:
    """Each SVG's ids prefixed by its position: several SVGs inline in one page share one id
    space, and matplotlib's ids repeat from chart to chart (clip paths would cross-refer)."""
    prefixed = []
    for index, svg in enumerate(svgs):
        prefixed.append(_REFERENCE.sub(rf"\g<1>c{index}-", svg))
    return prefixed
