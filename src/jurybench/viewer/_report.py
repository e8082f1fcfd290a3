"""``jurybench report html``: one or more runs as one self-contained HTML file (inline CSS,
plots as inline SVG), for a paper's appendix or a colleague without jurybench."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jurybench.store import StoreRef


def report_html(store: StoreRef, runs: list[str], output: Path) -> Path:
    """Write the runs' jury, jurors, figures with CIs, statistics (tables and plots) and
    calibrations to ``output``; nothing is written when a run is missing."""
    from jurybench.errors import JurybenchError
    from jurybench.store import reading
    from jurybench.viewer import _data, _detail
    from jurybench.viewer._web import HERE, environment, plot_of, result_table

    if not runs:
        raise JurybenchError("report html needs at least one --run.")
    if output.suffix.lower() not in (".html", ".htm"):
        raise JurybenchError(f"{output}: the report is written as .html.", hint="Use -o report.html.")
    sections = []
    with reading(store) as con:
        for run_id in runs:
            run = _data.run_header(con, run_id)
            results = []
            for r in _data.run_results(con, run_id):
                full = _detail.result(con, r["result_id"])
                columns, rows = result_table(full)
                results.append({**full, "plot": plot_of(con, full), "columns": columns, "rows": rows})
            calibration = _data.run_calibration(con, run)
            sections.append(
                {
                    "run": run,
                    "figures": _data.run_figures(con, run),
                    "jurors": _data.run_jurors(con, run),
                    "agreement": _data.run_agreement(con, run),
                    "leaning": _data.run_leaning(con, run),
                    "results": results,
                    "calibration": _detail.calibration(con, calibration["calibration_id"]) if calibration else None,
                }
            )
    env = environment()
    # Our own style sheet, inlined as it is: escaped, its quotes (font names) and '>' selectors broke
    # it and the report fell back to the browser's serif font. It must not close its own element.
    css = (HERE / "static" / "viewer.css").read_text(encoding="utf-8")
    if "</" in css:
        raise JurybenchError("viewer.css contains '</': it cannot be inlined in <style> (a jurybench bug).")
    html = env.get_template("report.html").render(
        title="jurybench report: " + ", ".join(runs),
        sections=sections,
        inline_css=css,
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    partial.write_text(html, encoding="utf-8")
    partial.replace(output)  # a whole file or none
    return output
