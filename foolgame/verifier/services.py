"""The model in the loop (Adversarial NLI, Dynabench), trained by the game itself.

- **Versions.** ``verifier_train_now`` trains the next version on the claims people verified
  (a checks gold label equal to the author's, a settled label, a release claim) once
  ``RETRAIN_EVERY`` more of them arrived, in the worker or a command, never in a request and
  never twice at once (a cache lock, as the giveaway detector's). Every version is measured
  on one frozen page-disjoint slice, beside a claim-only baseline trained on the same cut,
  and is promoted only if it is not worse there than the active one. The span in which a
  version is active is a collection round; an operator can activate and roll back.
- **Writers play against it.** The draft check and the save show the active version's
  verdict on the claim with its gold sentences; each distinct draft it judged is a try. A
  claim it got wrong pays its author ``model`` points once people confirm its label.
- **A machine player.** The active version answers every settled round and answered check,
  stored beside the players' answers; it is rated on the players' scale from its rounds.
"""

from __future__ import annotations

import hashlib
import logging
import time
from datetime import timedelta
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, models, transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from foolgame.authoring.models import WriteTask
from foolgame.checks import selectors as checks_selectors
from foolgame.checks.models import Check
from foolgame.checks.services import record_weight
from foolgame.moderation.models import PlayerHold
from foolgame.claims.models import Claim, ClaimGold
from foolgame.core import events, hooks
from foolgame.core.caches import held_lock
from foolgame.core.errors import ServiceError
from foolgame.evidence.services import encoder_get
from foolgame.players.models import LedgerEntry, Notification, PlayerRating, SignupOrigin
from foolgame.verifier import runtime
from foolgame.verifier.models import (
    Activation,
    ClaimVerdict,
    EvaluationSlice,
    MachineAnswer,
    Try,
    VerifierVersion,
    WrittenAgainst,
)
from foolgame.voting.models import Round, Vote
from scoring import ratings as r
from scoring.filters import wilson
from scoring.validation import LABELS

logger = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]
TRAIN_LOCK = "fm2:verifier:train"
LABEL_PAIR = (Claim.Label.SUPPORTS.value, Claim.Label.REFUTES.value)


def _config() -> dict[str, Any]:
    return settings.FM2_VERIFIER


def _quiet(stage: str, done: int, total: int) -> None:
    pass


# --- Which claims count as verified ----------------------------------------------------------


def _settled_vote_rows() -> list[tuple[int, bool, int, int, int, int]]:
    """Every settled vote: (voter, correct, left claim, its author, right claim, its author)."""
    return list(
        Vote.objects.filter(settled=True).values_list(
            "round__player_id", "correct", "round__left_claim_id", "round__left_claim__author_id", "round__right_claim_id", "round__right_claim__author_id"
        )
    )


@dataclass
class Independence:
    """Who may confirm a claim's label for its author's model points and for training
    (docs/verifier.md): never the author, an account held by the integrity test, nor one
    made from the author's signup address within LINK_WINDOW_SECONDS of the author's account.
    A voter must also have INDEPENDENT_MIN_VOTES settled votes of which at most
    INDEPENDENT_MAX_AUTHOR_SHARE were on pairs holding that author's claims (a ring's
    accounts vote for one author); a checker, a tallied record of MIN_GOLD settled claims
    whose labels count."""

    held: set[int]
    origins: dict[int, tuple[str, Any]]
    votes: dict[int, int]
    votes_on_author: dict[tuple[int, int], int]
    checkers: set[int]

    @classmethod
    def now(cls, rows: Sequence[tuple[int, bool, int, int, int, int]]) -> Independence:
        votes: dict[int, int] = {}
        on_author: dict[tuple[int, int], int] = {}
        for voter, _, _, left_author, _, right_author in rows:
            votes[voter] = votes.get(voter, 0) + 1
            for author in {left_author, right_author}:
                on_author[(voter, author)] = on_author.get((voter, author), 0) + 1
        config = settings.FM2_CHECKS
        last = checks_selectors.last_tallies()
        checkers = {player for player, (right, seen) in last.items() if seen >= config["MIN_GOLD"] and record_weight(right, seen) > 0}
        return cls(
            held=set(PlayerHold.objects.filter(held=True).values_list("player_id", flat=True)),
            origins={pk: (address, created) for pk, address, created in SignupOrigin.objects.values_list("player_id", "address", "created")},
            votes=votes,
            votes_on_author=on_author,
            checkers=checkers,
        )

    def _unlinked(self, person: int, author: int) -> bool:
        if person == author or person in self.held:
            return False
        mine, theirs = self.origins.get(person), self.origins.get(author)
        window = timedelta(seconds=_config()["LINK_WINDOW_SECONDS"])
        return not (mine and theirs and mine[0] == theirs[0] and abs(mine[1] - theirs[1]) <= window)

    def voter(self, voter: int, author: int) -> bool:
        config = _config()
        total = self.votes.get(voter, 0)
        if total < config["INDEPENDENT_MIN_VOTES"] or not self._unlinked(voter, author):
            return False
        return self.votes_on_author.get((voter, author), 0) <= total * config["INDEPENDENT_MAX_AUTHOR_SHARE"]

    def checker(self, checker: int, author: int) -> bool:
        return checker in self.checkers and self._unlinked(checker, author)


def settled_by_game_votes(independence: Independence | None = None, rows: Sequence[tuple[int, bool, int, int, int, int]] | None = None) -> set[int]:
    """Game claims whose own settled votes confirm their label, on the checks' rule for the
    release's votes: at least GOLD_MIN_VOTES of them, GOLD_MIN_AGREEMENT or more correct (a
    correct vote found the pair's false claim, so it agrees with both claims' labels), counting
    only votes from voters independent of the claim's author (``Independence``). For the
    worker, not a request."""
    config = settings.FM2_CHECKS
    rows = _settled_vote_rows() if rows is None else rows
    independence = independence or Independence.now(rows)
    tally: dict[int, list[int]] = {}
    for voter, correct, left, left_author, right, right_author in rows:
        for claim_id, author in ((left, left_author), (right, right_author)):
            if independence.voter(voter, author):
                counts = tally.setdefault(claim_id, [0, 0])
                counts[0] += 1
                counts[1] += int(correct)
    least = max(1, config["GOLD_MIN_VOTES"])
    return {pk for pk, (votes, right) in tally.items() if votes >= least and right >= votes * config["GOLD_MIN_AGREEMENT"]}


def confirmed_by_checks(independence: Independence | None = None) -> set[int]:
    """Claims whose checks' gold label is the author's, with at least LABELS_NEEDED - 1 of the
    agreeing labels (three, with the author's the 3 of 5) from checkers independent of the
    author whose tallied record counts (``Independence.checker``)."""
    independence = independence or Independence.now(_settled_vote_rows())
    agreeing: dict[int, int] = {}
    rows = Check.objects.filter(answered_at__isnull=False, claim__validation__gold_label=F("claim__label"), label=F("claim__label"))
    for claim_id, checker, author in rows.values_list("claim_id", "player_id", "claim__author_id"):
        if independence.checker(checker, author):
            agreeing[claim_id] = agreeing.get(claim_id, 0) + 1
    need = max(1, settings.FM2_CHECKS["LABELS_NEEDED"] - 1)
    return {claim_id for claim_id, n in agreeing.items() if n >= need}


def confirmed_by_people() -> Q:
    """Claims whose label people independent of its author confirmed: checkers
    (``confirmed_by_checks``) or the game's own votes (``settled_by_game_votes``); or the label
    is settled otherwise (a release claim most of its original voters judged as labelled, a
    moderator's keep or relabel)."""
    rows = _settled_vote_rows()
    independence = Independence.now(rows)
    return checks_selectors.settled() | Q(pk__in=confirmed_by_checks(independence)) | Q(pk__in=settled_by_game_votes(independence, rows))


def verified_claims() -> QuerySet[Claim]:
    """Active claims with gold evidence whose label counts as verified for training: confirmed
    by people, or imported from a published release (whose labels its own game verified); never
    one whose checks' gold label disagrees with its author."""
    disputed = Q(validation__gold_label__in=LABELS) & ~Q(validation__gold_label=F("label"))
    return (
        Claim.objects.filter(status=Claim.Status.ACTIVE, label__in=LABEL_PAIR, gold_links__isnull=False)
        .filter(confirmed_by_people() | Q(external_id__isnull=False))
        .exclude(disputed)
        .distinct()
    )


def gold_texts(claim_ids: Iterable[int]) -> dict[int, list[str]]:
    """Each claim's gold sentences' texts, in the author's order."""
    texts: dict[int, list[str]] = {}
    rows = ClaimGold.objects.filter(claim_id__in=list(claim_ids)).order_by("claim_id", "position").values_list("claim_id", "sentence__text")
    for claim_id, text in rows:
        texts.setdefault(claim_id, []).append(text)
    return texts


@dataclass(frozen=True, slots=True)
class Example:
    claim_id: int
    page_id: int
    text: str
    evidence: list[str]
    label: str


def _examples(claims: QuerySet[Claim]) -> list[Example]:
    rows = list(claims.order_by("pk").values_list("pk", "page_id", "text", "label"))
    evidence = gold_texts(pk for pk, *_ in rows)
    return [Example(pk, page, text, evidence.get(pk, []), label) for pk, page, text, label in rows if evidence.get(pk)]


# --- The frozen evaluation slice --------------------------------------------------------------


def _page_rank(page_id: int) -> str:
    return hashlib.sha256(f"fm2-verifier-slice:{page_id}".encode()).hexdigest()


def evaluation_slice(*, examples: Sequence[Example] | None = None) -> EvaluationSlice:
    """The slice every version is measured on, frozen at the first training: the claims of
    ``EVAL_SHARE`` of the verified claims' pages (by a hash of the page id, so it does not
    depend on arrival order). Claims later written on those pages are never trained on."""
    existing = EvaluationSlice.objects.order_by("pk").first()
    if existing is not None:
        return existing
    examples = examples if examples is not None else _examples(verified_claims())
    pages = sorted({e.page_id for e in examples}, key=_page_rank)
    share = _config()["EVAL_SHARE"]
    slice_pages = set(pages[: max(1, round(len(pages) * share))]) if pages else set()
    claim_ids = [e.claim_id for e in examples if e.page_id in slice_pages]
    return EvaluationSlice.objects.create(page_ids=sorted(slice_pages), claim_ids=claim_ids)


def slice_examples(frozen: EvaluationSlice) -> list[Example]:
    """The slice's claims as they stand (a claim removed since, or whose label people now
    dispute, drops out; a relabelled one is scored on its new label)."""
    return _examples(verified_claims().filter(pk__in=frozen.claim_ids))


# --- Figures ---------------------------------------------------------------------------------


def figures(predicted: Sequence[str], gold: Sequence[str]) -> dict[str, Any]:
    """Accuracy with its 95% Wilson interval, macro-F1 over the two labels, and n."""
    n = len(gold)
    hits = sum(1 for p, g in zip(predicted, gold) if p == g)
    f1s = []
    for label in LABEL_PAIR:
        tp = sum(1 for p, g in zip(predicted, gold) if p == label and g == label)
        fp = sum(1 for p, g in zip(predicted, gold) if p == label and g != label)
        fn = sum(1 for p, g in zip(predicted, gold) if p != label and g == label)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    low, high = wilson(hits, n)
    return {"n": n, "accuracy": hits / n if n else None, "ci95": [low, high] if n else None, "macro_f1": sum(f1s) / 2 if n else None}


def claim_only_predictions(train: Sequence[Example], test: Sequence[Example]) -> list[str] | None:
    """The claim-only baseline (TF-IDF + logistic regression, ``scoring.artifacts``) trained
    on ``train``'s claims alone and run on ``test``'s; None without both labels to learn."""
    from scoring.artifacts import claim_only_baseline

    if len({e.label for e in train}) < 2 or not test:
        return None
    result = claim_only_baseline([(e.text, e.label) for e in train], {"test": [(e.text, e.label) for e in test]})
    return result.predictions["test"]


def evaluate(verifier: Any, examples: Sequence[Example]) -> dict[str, Any]:
    verdicts = verifier.verdicts([(e.text, e.evidence) for e in examples]) if examples else []
    return figures([v.label for v in verdicts], [e.label for e in examples])


# --- Training the next version ---------------------------------------------------------------


def retrain_due() -> bool:
    """The first version is due at MIN_CLAIMS verified claims; the next once RETRAIN_EVERY more
    arrived since the newest version was trained (a folder model: when its weights changed)."""
    latest = VerifierVersion.objects.order_by("-number").first()
    folder = _config().get("MODEL_PATH")
    if folder:
        return latest is None or latest.fingerprint != _folder_fingerprint(folder)
    count = verified_claims().count()
    if latest is None or latest.kind != VerifierVersion.Kind.HEAD:
        return count >= _config()["MIN_CLAIMS"]
    return count - latest.verified_claims >= _config()["RETRAIN_EVERY"]


def _folder_fingerprint(folder: str) -> str:
    from pathlib import Path

    digest = hashlib.sha256(str(Path(folder).resolve()).encode())
    for path in sorted(Path(folder).glob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:32]


def verifier_train_now(*, force: bool = False, progress: Progress | None = None) -> VerifierVersion | None:
    """Train (or, for an operator's folder model, register) the next version if due, measure
    it on the frozen slice and promote it if it is not worse than the active one.

    Two deliveries at once train once: the due check and the training run under one lock (an
    atomic cache ``add``, shared by every worker on Redis); a trainer that crashed holding it
    blocks training only until ``VERIFIER_TRAIN_LOCK_SECONDS``. Returns the new version, or
    None when nothing was due, another worker holds the lock, or there is too little to learn
    from (fewer than two labels)."""
    with held_lock(TRAIN_LOCK, seconds=settings.FM2_JOBS["VERIFIER_TRAIN_LOCK_SECONDS"]) as mine:
        if not mine or (not force and not retrain_due()):
            return None
        return _train(progress or _quiet)


def _train(progress: Progress) -> VerifierVersion | None:
    from retrieval.verifier import NliFolderVerifier, train_head_verifier

    config = _config()
    progress("reading claims", 0, 1)
    examples = _examples(verified_claims())
    frozen = evaluation_slice(examples=examples)
    held_out = set(frozen.page_ids)
    train = [e for e in examples if e.page_id not in held_out]
    test = slice_examples(frozen)
    progress("reading claims", 1, 1)
    started = time.perf_counter()
    folder = config.get("MODEL_PATH")
    blob: bytes | None = None
    if folder:
        verifier: Any = NliFolderVerifier(
            folder, label_map=config.get("LABEL_MAP") or None, neutral=config.get("NEUTRAL", "drop"), onnx_cache_dir=settings.FM2_RETRIEVAL["ONNX_CACHE_DIR"]
        )
        kind, name, fingerprint, trained_on = VerifierVersion.Kind.FOLDER, verifier.name, _folder_fingerprint(folder), []
    else:
        try:
            verifier = train_head_verifier(
                [e.text for e in train],
                [e.evidence for e in train],
                [e.label for e in train],
                encoder=encoder_get(),
                groups=[e.page_id for e in train],  # C is chosen on folds that keep a page's claims together
                progress=lambda done, total: progress("training", done, total),
            )
        except ValueError as error:
            logger.info("verifier not trained: %s", error)
            return None
        blob = verifier.dumps()
        kind, name, trained_on = VerifierVersion.Kind.HEAD, verifier.name, train
        fingerprint = hashlib.sha256(blob).hexdigest()[:32]
    seconds = time.perf_counter() - started
    progress("evaluating", 0, 1)
    measured = evaluate(verifier, test)
    baseline = claim_only_predictions(train, test)
    measured["claim_only"] = figures(baseline, [e.label for e in test]) if baseline is not None else None
    progress("evaluating", 1, 1)
    with transaction.atomic():
        number = (VerifierVersion.objects.select_for_update().aggregate(top=models.Max("number"))["top"] or 0) + 1
        version = VerifierVersion.objects.create(
            number=number,
            kind=kind,
            name=name,
            blob=blob,
            model_path=str(folder or ""),
            fingerprint=fingerprint,
            claims_trained=len(trained_on),
            newest_claim_id=max((e.claim_id for e in examples), default=0),
            verified_claims=len(examples),
            trained_page_ids=sorted({e.page_id for e in trained_on}),
            seconds=round(seconds, 2),
            figures={"slice": measured},
        )
        _promote_if_not_worse(version, test)
    runtime.remember(version, verifier)
    if version.status == VerifierVersion.Status.ACTIVE:
        claim_verdicts_fill(version=version, progress=progress)
    return version


def _promote_if_not_worse(version: VerifierVersion, test: Sequence[Example]) -> None:
    """Promote ``version`` unless the active one does better on the slice's claims as they
    stand now (measured again, so both are scored on the same claims)."""
    active = VerifierVersion.objects.select_for_update().filter(status=VerifierVersion.Status.ACTIVE).first()
    mine = version.figures["slice"]["accuracy"]
    if active is None:
        version.decision = "The first version: promoted."
        _activate(version, action=Activation.Action.PROMOTE)
        return
    try:
        theirs = evaluate(runtime.loaded(active, wait=True), test)["accuracy"]
    except ValueError as error:  # a head stored by an older feature list no longer loads
        logger.warning("active verifier v%s does not load (%s): the new version replaces it", active.number, error)
        theirs = None
    tolerance = _config()["PROMOTE_TOLERANCE"]
    if mine is not None and (theirs is None or mine >= theirs - tolerance):
        version.decision = f"Promoted: {mine:.3f} on the frozen slice against v{active.number}'s {theirs if theirs is None else round(theirs, 3)}."
        _activate(version, action=Activation.Action.PROMOTE)
    else:
        version.decision = f"Not promoted: {mine} on the frozen slice against v{active.number}'s {theirs:.3f}."
        version.save(update_fields=["decision"])


def _activate(version: VerifierVersion, *, action: str, by: AbstractBaseUser | None = None) -> None:
    VerifierVersion.objects.filter(status=VerifierVersion.Status.ACTIVE).exclude(pk=version.pk).update(status=VerifierVersion.Status.RETIRED)
    version.status = VerifierVersion.Status.ACTIVE
    version.promoted = version.promoted or action == Activation.Action.PROMOTE
    version.save(update_fields=["status", "promoted", "decision"])
    Activation.objects.create(version=version, action=action, by=by)


def version_activate(*, number: int, by: AbstractBaseUser | None = None) -> VerifierVersion:
    """Make version ``number`` the one writers play against (a new collection round)."""
    with transaction.atomic():
        version = VerifierVersion.objects.select_for_update().filter(number=number).first()
        if version is None:
            raise ServiceError("not_found", f"There is no version {number}.", status_code=404)
        if version.status == VerifierVersion.Status.ACTIVE:
            raise ServiceError("already_active", f"Version {number} is already active.", status_code=409)
        _activate(version, action=Activation.Action.ACTIVATE, by=by)
    return version


def version_rollback(*, by: AbstractBaseUser | None = None) -> VerifierVersion:
    """Go back to the version that was active before the current one."""
    with transaction.atomic():
        active = VerifierVersion.objects.select_for_update().filter(status=VerifierVersion.Status.ACTIVE).first()
        if active is None:
            raise ServiceError("nothing_active", "No version is active.", status_code=409)
        earlier = (
            Activation.objects.filter(at__lte=Activation.objects.filter(version=active).order_by("-at", "-id").values("at")[:1])
            .exclude(version=active)
            .order_by("-at", "-id")
            .select_related("version")
            .first()
        )
        if earlier is None:
            raise ServiceError("nothing_to_roll_back_to", f"Version {active.number} is the first that was active.", status_code=409)
        _activate(earlier.version, action=Activation.Action.ROLLBACK, by=by)
        return earlier.version


def active_version() -> VerifierVersion | None:
    return VerifierVersion.objects.filter(status=VerifierVersion.Status.ACTIVE).defer("blob").first()


# --- Verdicts while writing -------------------------------------------------------------------


def _verdict_payload(version: VerifierVersion, verdict: Any, label: str) -> dict[str, Any]:
    return {"version": version.number, "label": verdict.label, "probability": round(verdict.probability, 3), "fooled": verdict.label != label}


def _pending(version: VerifierVersion) -> dict[str, Any]:
    return {"version": version.number, "pending": True, "message": "The model is warming up; its verdict comes with your next check."}


def _digest(text: str, gold_ids: Sequence[int]) -> str:
    return hashlib.sha256(f"{' '.join(text.split()).casefold()}|{','.join(map(str, gold_ids))}".encode()).hexdigest()


def verdict_on_draft(*, task: WriteTask, text: str, gold: Sequence[Any]) -> dict[str, Any] | None:
    """The active version's verdict on a draft with its ticked gold sentences; each distinct
    draft (text and gold) it judged is one try of the task."""
    version = active_version()
    if version is None:
        return None
    verifier = runtime.loaded(version)
    if verifier is None:
        return None if runtime.failed(version) else _pending(version)
    verdict = verifier.verdicts([(text, [s.text for s in gold])])[0]
    label = task.label
    try:
        with transaction.atomic():
            Try.objects.get_or_create(
                task=task, version=version, digest=_digest(text, [s.pk for s in gold]), defaults={"label": verdict.label, "supports": verdict.supports}
            )
    except IntegrityError:  # the same draft checked twice at once: one try
        pass
    return _verdict_payload(version, verdict, label)


def verdict_on_save(*, claim: Claim, task: WriteTask, gold: Sequence[Any]) -> dict[str, Any] | None:
    """Record the version ``claim`` is written against and its verdict (inside the save's
    transaction). A model still loading gives its verdict from the worker's sweep."""
    version = active_version()
    if version is None:
        return None
    verifier = runtime.loaded(version)
    tries = Try.objects.filter(task=task, version=version).exclude(digest=_digest(claim.text, [s.pk for s in gold])).count() + 1
    if verifier is None:
        WrittenAgainst.objects.create(claim=claim, version=version, tries=tries)
        from foolgame.verifier.tasks import verifier_fill_written  # the tasks module imports this one

        events.task_in_background_on_commit(verifier_fill_written, [claim.pk])
        return _pending(version) | {"message": "The model is warming up; you will hear if your claim fooled it."}
    verdict = verifier.verdicts([(claim.text, [s.text for s in gold])])[0]
    WrittenAgainst.objects.create(claim=claim, version=version, label=verdict.label, supports=verdict.supports, tries=tries)
    ClaimVerdict.objects.update_or_create(claim=claim, version=version, defaults={"supports": verdict.supports, "label": verdict.label})
    return _verdict_payload(version, verdict, claim.label)


def written_verdicts_fill(*, claim_ids: Sequence[int] | None = None) -> int:
    """Give the claims saved while their version was loading their save-time verdict."""
    rows = WrittenAgainst.objects.filter(label="").select_related("version", "claim")
    if claim_ids is not None:
        rows = rows.filter(claim_id__in=claim_ids)
    done = 0
    for row in rows:
        verifier = runtime.loaded(row.version, wait=True)
        verdict = verifier.verdicts([(row.claim.text, gold_texts([row.claim_id]).get(row.claim_id, []))])[0]
        WrittenAgainst.objects.filter(pk=row.pk, label="").update(label=verdict.label, supports=verdict.supports)
        ClaimVerdict.objects.update_or_create(claim_id=row.claim_id, version=row.version, defaults={"supports": verdict.supports, "label": verdict.label})
        done += 1
    return done


def claim_verdicts_fill(*, version: VerifierVersion, claim_ids: Sequence[int] | None = None, progress: Progress | None = None, chunk: int = 256) -> int:
    """``version``'s verdict on every active claim with gold evidence it has none for (the
    claims' hardness for the model; the export's per-version verdicts)."""
    progress = progress or _quiet
    claims = Claim.objects.filter(status=Claim.Status.ACTIVE, gold_links__isnull=False).exclude(model_verdicts__version=version).distinct()
    if claim_ids is not None:
        claims = claims.filter(pk__in=claim_ids)
    ids = list(claims.order_by("pk").values_list("pk", flat=True))
    verifier = runtime.loaded(version, wait=True)
    for start in range(0, len(ids), chunk):
        _judge(version, verifier, ids[start : start + chunk])
        progress("verdicts", min(start + chunk, len(ids)), len(ids))
    return len(ids)


def _judge(version: VerifierVersion, verifier: Any, claim_ids: Sequence[int]) -> dict[int, Any]:
    """``version``'s verdicts on these claims with their gold sentences (a claim without gold
    is left out), stored as ``ClaimVerdict`` rows (one a claim and version, whoever wrote first)."""
    texts = dict(Claim.objects.filter(pk__in=claim_ids).values_list("pk", "text"))
    evidence = gold_texts(claim_ids)
    todo = [pk for pk in claim_ids if evidence.get(pk) and pk in texts]
    verdicts = dict(zip(todo, verifier.verdicts([(texts[pk], evidence[pk]) for pk in todo]) if todo else []))
    ClaimVerdict.objects.bulk_create(
        [ClaimVerdict(claim_id=pk, version=version, supports=v.supports, label=v.label) for pk, v in verdicts.items()], ignore_conflicts=True
    )
    return verdicts


# --- model points ------------------------------------------------------------------------------


def model_points_award(*, claim_ids: Sequence[int] | None = None) -> int:
    """Pay ``MODEL_POINTS`` to the author of each claim its version got wrong at the save, once
    people confirm the claim's label (ANLI's verified model error), with a notification. Once
    per claim (``paid`` and the ledger's cause), whatever the deliveries. The amount is the
    author's own (``hooks.player_settings``: a study's arm may set its ``model_points``; 0
    marks the claim paid with no ledger row)."""
    rows = (
        WrittenAgainst.objects.filter(paid=False)
        .exclude(label="")
        .exclude(label=F("claim__label"))
        .filter(claim__status=Claim.Status.ACTIVE)
        .filter(claim__in=Claim.objects.filter(confirmed_by_people()))
    )
    if claim_ids is not None:
        rows = rows.filter(claim_id__in=claim_ids)
    per_day = _config()["MODEL_POINTS_PER_DAY"]
    since = timezone.now() - timedelta(days=1)
    paid = 0
    for claim_id in rows.values_list("claim_id", flat=True):
        with transaction.atomic():
            row = WrittenAgainst.objects.select_for_update().select_related("claim").filter(claim_id=claim_id, paid=False).first()
            if row is None:
                continue
            # A cap a day per author: four fresh accounts that check a claim as its author says
            # can confirm a label, so farming model points is bounded; a claim over the cap
            # stays unpaid and is paid on a later day, never lost.
            get_user_model().objects.select_for_update().filter(pk=row.claim.author_id).first()
            points = int(hooks.player_settings.get().settings_for(player_id=row.claim.author_id)["model_points"])
            today = LedgerEntry.objects.filter(player_id=row.claim.author_id, kind=LedgerEntry.Kind.MODEL, created__gte=since).aggregate(n=models.Sum("amount"))["n"] or 0
            if today + points > per_day:
                continue
            row.paid = True
            row.save(update_fields=["paid"])
            if points:
                LedgerEntry.objects.create(player_id=row.claim.author_id, amount=points, kind=LedgerEntry.Kind.MODEL, claim_id=claim_id, cause=f"model:{claim_id}")
            Notification.objects.create(player_id=row.claim.author_id, kind=Notification.Kind.MODEL_FOOLED, claim_id=claim_id, points=points)
            paid += 1
    return paid


# --- The machine player -----------------------------------------------------------------------


def _settled_rounds() -> QuerySet[Round]:
    """Rounds whose answer is out: a settled vote, a timeout, a forfeit past its answer time."""
    now = timezone.now()
    return Round.objects.filter(
        Q(state=Round.State.VOTED, vote__settled=True)
        | Q(state=Round.State.TIMED_OUT)
        | Q(state=Round.State.FORFEITED, answer_at__lte=now)
    )


def settled_round_ids(*, claim_ids: Sequence[int]) -> list[int]:
    """The settled rounds on any of these claims."""
    return list(_settled_rounds().filter(Q(left_claim_id__in=claim_ids) | Q(right_claim_id__in=claim_ids)).values_list("pk", flat=True))


def machine_answers_write(*, round_ids: Sequence[int] | None = None, check_ids: Sequence[int] | None = None, limit: int | None = None) -> int:
    """The active version's answers to the settled rounds and answered checks it has not
    answered yet (those given, or the oldest ``ANSWER_CHUNK`` of each)."""
    version = active_version()
    if version is None:
        return 0
    limit = limit or _config()["ANSWER_CHUNK"]
    verifier = runtime.loaded(version, wait=True)
    rounds = _settled_rounds().exclude(pk__in=MachineAnswer.objects.filter(version=version, round__isnull=False).values("round_id"))
    if round_ids is not None:
        rounds = rounds.filter(pk__in=round_ids)
    round_rows = list(rounds.order_by("pk").values_list("pk", "left_claim_id", "right_claim_id", "false_claim_index", "left_claim__label")[:limit])
    checks = Check.objects.filter(answered_at__isnull=False).exclude(pk__in=MachineAnswer.objects.filter(version=version, fact_check__isnull=False).values("fact_check_id"))
    if check_ids is not None:
        checks = checks.filter(pk__in=check_ids)
    check_rows = list(checks.order_by("pk").values_list("pk", "claim_id", "claim__label")[:limit])
    claim_ids = {pk for _, left, right, _, _ in round_rows for pk in (left, right)} | {claim for _, claim, _ in check_rows}
    verdicts = _verdicts_by_claim(version, verifier, claim_ids)
    answers = []
    for pk, left, right, false_index, left_label in round_rows:
        if left not in verdicts or right not in verdicts:
            continue
        truth = false_index if false_index is not None else (0 if left_label == Claim.Label.REFUTES else 1)
        refutes = (verdicts[left].refutes, verdicts[right].refutes)
        pick = 0 if refutes[0] >= refutes[1] else 1
        answers.append(MachineAnswer(version=version, round_id=pk, answer=str(pick), probability=round(refutes[pick], 4), correct=pick == truth))
    for pk, claim_id, label in check_rows:
        if claim_id not in verdicts:
            continue
        verdict = verdicts[claim_id]
        answers.append(MachineAnswer(version=version, fact_check_id=pk, answer=verdict.label, probability=round(verdict.probability, 4), correct=verdict.label == label))
    MachineAnswer.objects.bulk_create(answers, ignore_conflicts=True)
    return len(answers)


def _verdicts_by_claim(version: VerifierVersion, verifier: Any, claim_ids: Iterable[int]) -> dict[int, Any]:
    """The version's verdicts on these claims with their gold sentences (stored ones reused,
    missing ones computed and stored)."""
    from retrieval.verifier import Verdict

    claim_ids = set(claim_ids)
    stored = {pk: Verdict(supports=s, refutes=1.0 - s) for pk, s in ClaimVerdict.objects.filter(version=version, claim_id__in=claim_ids).values_list("claim_id", "supports")}
    missing = sorted(claim_ids - set(stored))
    if missing:
        stored.update(_judge(version, verifier, missing))
    return stored


def _mu(rating: float | None) -> float:
    """A rating on the 1500 scale as a logit (None: a newcomer's)."""
    return ((rating if rating is not None else r.DEFAULT_RATING) - r.DEFAULT_RATING) / r.GLICKO_SCALE


def versions_rate() -> int:
    """Each version's skill on the players' scale from its answers to settled rounds, against
    the claims' current difficulties (held fixed: a machine's answers never move them). The
    prior is centred on the rated players' mean."""
    prior_mu = _mu(PlayerRating.objects.aggregate(mean=models.Avg("rating"))["mean"])
    rated = 0
    for version in VerifierVersion.objects.defer("blob"):
        rows = list(
            MachineAnswer.objects.filter(version=version, round__isnull=False)
            .annotate(left_rating=F("round__left_claim__rating"), right_rating=F("round__right_claim__rating"))
            .values_list("left_rating", "right_rating", "correct")
        )
        # An unrated claim (no game vote yet) stands at the scale's middle, as a new claim does.
        games = [(_mu(left) + _mu(right), correct) for left, right, correct in rows]
        if not games:
            continue
        estimate = r.fit_fixed_skill(games, prior_mu=prior_mu)
        VerifierVersion.objects.filter(pk=version.pk).update(
            rating=r.to_rating_scale(estimate.value), rating_deviation=estimate.se * r.GLICKO_SCALE, answers=len(games)
        )
        rated += 1
    return rated


# --- Hardness ----------------------------------------------------------------------------------


def hard_for(*, people_wrong_share: float | None, model_wrong: bool | None) -> str | None:
    """``people``, ``model``, ``both`` or ``neither``: hard for people when most of its voters
    missed it (the Beta-smoothed correct-vote rate under one half), hard for the model when
    the active version gets its label wrong. None when either is unknown."""
    if people_wrong_share is None or model_wrong is None:
        return None
    people = people_wrong_share > 0.5
    if people and model_wrong:
        return "both"
    return "people" if people else ("model" if model_wrong else "neither")


# --- The sweep ---------------------------------------------------------------------------------


def verifier_sweep(*, progress: Progress | None = None) -> dict[str, int]:
    """Everything the worker does for the model in the loop, each step idempotent: train the
    next version if due, give claims saved while their model loaded their verdict, answer the
    settled rounds and checks, pay the authors whose claims fooled it, rate the versions."""
    version = verifier_train_now(progress=progress)
    return {
        "trained": version.number if version else 0,
        "filled": written_verdicts_fill(),
        "answers": machine_answers_write(),
        "paid": model_points_award(),
        "rated": versions_rate(),
    }
