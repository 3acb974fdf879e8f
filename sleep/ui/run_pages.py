"""Routes of the runs: the overview, the list, a run, its steps, skills, diffs, epochs and live events.

Every run route starts with :func:`_ref`, which maps the URL's three names to
a run directory through the catalog (404 otherwise); step and epoch numbers
are integers. Nothing else in a URL becomes part of a path. A file that is
the whole answer (a skill, the best skill, a diff's two skills, the event
stream) and that :mod:`sleep.ui.runfiles` refuses (a link out of the run
directory, not a regular file) gets a 403 page saying so; a page that only
uses such a file lists it among its problems.
"""

from __future__ import annotations

from typing import Any, overload
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from skillopt_core.run.reader import RunReader
from sleep.ui import charts, labels, live, runconfig, rundata, runtable, samples, stepdata
from sleep.ui.app import render, ui
from sleep.ui.data import last_night
from sleep.ui.runfiles import RunFileError
from sleep.ui.runs import RunNotFound, RunRef
from sleep.ui.svgplot import curve_svg
from sleep.ui.textdiff import side_by_side

PARTS = "_run_parts.html"
TABLE_STEPS = 100  # the step table shows the latest steps; ?steps=all shows every one (the curve always does)


def _ref(request: Request) -> RunRef:
    p = request.path_params
    try:
        return ui(request).catalog.resolve(p["root"], p["env"], p["run"])
    except RunNotFound as exc:
        raise HTTPException(404, f"No run at this address: {exc}. It may have been deleted or moved.") from None


def _refused(request: Request, exc: RunFileError) -> Response:
    return render(request, "error.html", status=403, title="Not shown", roots=[], message=(
        f"{exc}. The dashboard only shows regular files inside the run directory."))


@overload
def _int(request: Request, name: str, default: int) -> int: ...
@overload
def _int(request: Request, name: str, default: None = None) -> int | None: ...
def _int(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise HTTPException(400, f"{name}={raw!r} is not a step number") from None


# ----- overview and list ---------------------------------------------------------------------

async def home(request: Request) -> Response:
    u = ui(request)
    rows = await run_in_threadpool(u.catalog.rows)
    from sleep.ui.review_pages import pending_proposals

    pending, problem = await run_in_threadpool(pending_proposals, u)
    night = await run_in_threadpool(last_night, u.index_path)
    return render(request, "home.html", running=[r for r in rows if r.live], recent=rows[:8], total=len(rows),
                  pending=pending, proposals_problem=problem, night=night,
                  night_ref=u.catalog.ref_for_path(night.run_dir) if night else None)


async def runs_list(request: Request) -> Response:
    u = ui(request)
    rows = await run_in_threadpool(u.catalog.rows)
    v = runtable.view(rows, request.query_params)
    return render(request, "runs.html", v=v, per_choices=runtable.PER_CHOICES, bases=u.catalog.bases(),
                  skipped=u.catalog.skipped)


async def runs_export(request: Request) -> Response:
    """``/runs.csv`` and ``/runs.json``: every run the table with the same parameters shows."""
    u = ui(request)
    rows = runtable.export_rows(await run_in_threadpool(u.catalog.rows), request.query_params)
    if request.url.path.endswith(".csv"):
        return Response(runtable.to_csv(rows), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="runs.csv"'})
    return Response(runtable.to_json(rows), media_type="application/json",
                    headers={"Content-Disposition": 'attachment; filename="runs.json"'})


async def compare_page(request: Request) -> Response:
    """``/compare?run=<root>/<env>/<run>&run=…``: the runs' curves overlaid and their settings side by side."""
    u = ui(request)
    wanted = request.query_params.getlist("run")
    refs, missing = [], []
    for key in dict.fromkeys(wanted):  # once each, in the order ticked
        parts = key.split("/")
        try:
            if len(parts) != 3:
                raise RunNotFound(f"{key!r} is not <root>/<env>/<run>")
            refs.append(u.catalog.resolve(*parts))
        except RunNotFound as exc:
            missing.append(str(exc))
    pages = [await run_in_threadpool(_page, ref, u) for ref in refs[:charts.COLOURS]]
    configs = [await run_in_threadpool(runconfig.read_config, p.ref.path) for p in pages]
    labels = [p.ref.run_id if [q.ref.run_id for q in pages].count(p.ref.run_id) == 1 else f"{p.ref.env}/{p.ref.run_id}"
              for p in pages]
    rows = runconfig.differing(configs)
    only = request.query_params.get("all") != "1"
    return render(request, "compare.html", pages=pages, labels=labels, missing=missing,
                  dropped=max(0, len(refs) - charts.COLOURS), settings=[r for r in rows if r[2] or not only],
                  n_same=sum(1 for r in rows if not r[2]), only=only,
                  charts=charts.compare_charts(list(zip(labels, [p.steps for p in pages], strict=True)))
                  if pages else [],
                  query=request.url.query)


# ----- one run -------------------------------------------------------------------------------

def _page(ref: RunRef, u) -> rundata.RunPage:
    return rundata.load_run(ref, u.catalog.row(ref))


def _zoom(request: Request) -> tuple[int, int | None]:
    """The zoomed range of steps (``?from=&to=``), (0, None) for all of them."""
    lo = _int(request, "from", 0) or 0
    hi = _int(request, "to")
    if hi is not None and hi <= lo:
        lo, hi = 0, None  # an empty range shows everything
    return max(0, lo), hi


def _curve(page: rundata.RunPage, zoom: tuple[int, int | None] = (0, None)) -> str:
    epochs = []
    for e in page.epochs:
        after = max((s.step for s in page.steps if s.epoch == e.epoch), default=0)
        epochs.append((after, f"E{e.epoch}: slow update {e.slow_action.replace('_', ' ')}"))
    return curve_svg(page.initial_val, page.steps, page.row.total_steps, epochs, f"{page.ref.url}/steps",
                     first=zoom[0], last_step=zoom[1])


def _charts(page: rundata.RunPage, zoom: tuple[int, int | None] = (0, None)) -> str:
    return "".join(charts.run_charts(page.steps, zoom[0], zoom[1]))


async def run_page(request: Request) -> Response:
    ref = _ref(request)
    u = ui(request)
    page = await run_in_threadpool(_page, ref, u)
    zoom = _zoom(request)
    config = await run_in_threadpool(runconfig.read_config, ref.path)
    return render(request, "run.html", page=page, curve=_curve(page, zoom), charts=_charts(page, zoom),
                  run=page.row, limit=_limit(request), zoom=zoom, config=config, labels=page.row.labels,
                  flash=u.take_flash(request.query_params.get("flash")),
                  query=urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "flash"]))


async def labels_post(request: Request) -> Response:
    """Save the run's name, tags, note and archived flag; a redirect back to the run page says how it went."""
    from starlette.responses import RedirectResponse

    ref = _ref(request)
    u = ui(request)
    form = await request.form()

    def back(kind: str, title: str, messages: list[str]) -> Response:
        return RedirectResponse(f"{ref.url}?flash={u.flash(kind, title, messages)}", status_code=303)

    if not u.policy.csrf_ok(form.get("csrf")):
        return back("error", "Not saved", ["The form's security token is missing or out of date (the dashboard "
                                           "was restarted?). Nothing was changed: save again on this page."])
    try:
        new = labels.parse_form(form.get("name"), form.get("tags"), form.get("note"), form.get("archived"))
        await run_in_threadpool(labels.write_labels, ref.path, new)
    except labels.BadLabels as exc:
        return back("error", "Not saved", [str(exc), "Nothing was changed."])
    except OSError as exc:
        return back("error", "Not saved", [f"{ref.path}: {exc.strerror or exc}; nothing was changed."])
    return back("ok", "Saved." + (" The run is archived: the runs table hides it." if new.archived else ""), [])


def _limit(request: Request) -> int | None:
    return None if request.query_params.get("steps") == "all" else TABLE_STEPS


async def run_fragments(request: Request) -> Response:
    """The parts of the run page a live update replaces, rendered by the same macros."""
    ref = _ref(request)
    u = ui(request)
    page = await run_in_threadpool(_page, ref, u)
    macros: Any = u.templates.get_template(PARTS).module  # its attributes are the template's macros
    zoom = _zoom(request)
    return JSONResponse({
        "header": str(macros.header(page)), "curve": _curve(page, zoom), "charts": _charts(page, zoom),
        "skills": str(macros.skills(page)),
        "steps": str(macros.step_rows(page, _limit(request))),
        "epochs": str(macros.epochs(page)), "live": page.row.live, "offset": page.events_offset,
    })


async def run_events(request: Request) -> Response:
    ref = _ref(request)
    u = ui(request)
    offset = live.parse_offset(request.headers.get("last-event-id"), request.query_params.get("from"))
    try:
        await run_in_threadpool(RunReader(ref.path).events_size)  # refused: a link out of the run, a FIFO
    except RunFileError as exc:
        return _refused(request, exc)
    stream = live.follow(ref.path, offset, poll=u.poll, max_seconds=u.stream_seconds)
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def step_page(request: Request) -> Response:
    ref = _ref(request)
    n = request.path_params["n"]
    step = await run_in_threadpool(stepdata.load_step, ref, n)
    if step is None:
        raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no step {n} (yet).")
    diff = side_by_side(step.before or "", step.candidate) if step.candidate is not None else None
    by_id, _ = await run_in_threadpool(samples.items, ref)
    return render(request, "step.html", ref=ref, n=n, step=step, diff=diff, items=by_id,
                  run=await run_in_threadpool(ui(request).catalog.row, ref))


async def sample_page(request: Request) -> Response:
    ref = _ref(request)
    n, i = request.path_params["n"], request.path_params["i"]
    view = await run_in_threadpool(samples.sample_view, ref, n, i)
    if view is None:
        raise HTTPException(404, f"Step {n} of {ref.env}/{ref.run_id} has no sample {i}.")
    return render(request, "sample.html", v=view, ref=ref, n=n)


async def matrix_page(request: Request) -> Response:
    ref = _ref(request)
    lo, hi = _int(request, "from"), _int(request, "to")
    m = await run_in_threadpool(samples.matrix, ref, lo, hi)
    return render(request, "matrix.html", m=m, ref=ref)


async def item_page(request: Request) -> Response:
    """``/runs/…/items?id=<item id>``: every rollout and gate delta of one item (the id is only compared
    with the run's own ids, never made into a path)."""
    ref = _ref(request)
    item_id = request.query_params.get("id") or ""
    h = await run_in_threadpool(samples.item_history, ref, item_id)
    if h is None:
        raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no item {item_id!r}.")
    return render(request, "item.html", h=h, ref=ref)


def _skill_steps(ref: RunRef) -> list[int]:
    return rundata.numbered(ref.path, "skills", "step_", ".md")


async def skill_page(request: Request) -> Response:
    ref = _ref(request)
    n = request.path_params["n"]
    try:
        text = await run_in_threadpool(rundata.skill_text, ref, n)
    except RunFileError as exc:
        return _refused(request, exc)
    if text is None:
        raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no skill for step {n} (yet).")
    if request.query_params.get("raw"):
        return PlainTextResponse(text)
    return render(request, "skill.html", ref=ref, title=f"Skill after step {n}" if n else "Initial skill",
                  text=text, n=n, steps=await run_in_threadpool(_skill_steps, ref))


async def best_skill(request: Request) -> Response:
    ref = _ref(request)
    try:
        text = await run_in_threadpool(rundata.best_text, ref)
    except RunFileError as exc:
        return _refused(request, exc)
    if text is None:
        raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no best_skill.md yet.")
    if request.query_params.get("raw"):
        return PlainTextResponse(text)
    return render(request, "skill.html", ref=ref, title="Best skill", text=text, n=None,
                  steps=await run_in_threadpool(_skill_steps, ref))


async def diff_page(request: Request) -> Response:
    ref = _ref(request)
    steps = await run_in_threadpool(_skill_steps, ref)
    if not steps:
        raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no skills yet.")
    a = _int(request, "a", steps[0])
    b = _int(request, "b", steps[-1])
    full = request.query_params.get("context") == "all"
    try:
        texts = [await run_in_threadpool(rundata.skill_text, ref, n) for n in (a, b)]
    except RunFileError as exc:
        return _refused(request, exc)
    pair: list[str] = []
    for n, text in zip((a, b), texts, strict=True):
        if text is None:
            raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no skill for step {n}; "
                                     f"steps with a skill: {steps[0]}–{steps[-1]}.")
        pair.append(text)
    diff = side_by_side(pair[0], pair[1], None if full else 3)
    return render(request, "diff.html", ref=ref, a=a, b=b, steps=steps, diff=diff, full=full)


async def epoch_page(request: Request) -> Response:
    ref = _ref(request)
    n = request.path_params["n"]
    info = await run_in_threadpool(rundata.epoch_info, ref, n)
    if info is None:
        raise HTTPException(404, f"Run {ref.env}/{ref.run_id} has no record of epoch {n} (yet).")
    return render(request, "epoch.html", ref=ref, epoch=info)


_RUN = "/runs/{root}/{env}/{run}"
routes = [
    Route("/", home),
    Route("/runs", runs_list),
    Route("/compare", compare_page),
    Route("/runs.csv", runs_export, name="runs_csv"),
    Route("/runs.json", runs_export, name="runs_json"),
    Route(_RUN, run_page),
    Route(_RUN + "/fragments", run_fragments),
    Route(_RUN + "/events", run_events),
    Route(_RUN + "/steps/{n:int}", step_page),
    Route(_RUN + "/steps/{n:int}/samples/{i:int}", sample_page),
    Route(_RUN + "/matrix", matrix_page),
    Route(_RUN + "/items", item_page),
    Route(_RUN + "/labels", labels_post, methods=["POST"]),
    Route(_RUN + "/skills/{n:int}", skill_page),
    Route(_RUN + "/best", best_skill),
    Route(_RUN + "/diff", diff_page),
    Route(_RUN + "/epochs/{n:int}", epoch_page),
]
