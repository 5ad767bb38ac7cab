"""The personal-data and offensive-language gates on reference data: false alarms on the FM2
dev split as published, recall on a planted set.

    python bench/bench_gates.py [--fm2 ../shared/data/fm2/dev.jsonl] [--seed 38] [--per-kind 60]

False alarms: every record of the file is scanned as the export's gates scan a claim record
(``scoring.textscan.record_findings``; the FM2 files have the export's field names). The
published release holds no contact details or slurs of its players, so every record the
gates would count is a false alarm. Printed under two rules: "every text field" (the rule
before issue 38: the claim, evidence sentences, page title and category all counted) and
"written by players" (the rule now: the claim counted, Wikipedia's quotes reported only).

Recall: a planted set built here, ``--per-kind`` game-written claims of each kind (e-mail
address, phone number, street address, listed word), each a real dev claim with one planted
item put before, inside or after it, in the written forms the set lists (``PLANTS``);
recall is the share of planted claims whose kind the gates count, with a 95% Wilson
interval. The set also lists forms the expressions are known to miss (``MISSED_FORMS``),
measured apart so that the headline figure says what it covers.

Only the dev split is read (thresholds are never chosen on the test split). Pure
computation: no database, no Redis; a second or two.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from scoring.filters import wilson  # noqa: E402
from scoring.textscan import OFFENSIVE, load_word_list, record_findings  # noqa: E402

DEFAULT_FM2 = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fm2" / "dev.jsonl"
FIRST = ("jane", "omar", "li", "maria", "tom", "aiko", "pedro", "sven")
LAST = ("roe", "haddad", "wei", "garcia", "baker", "sato", "silva", "berg")
DOMAINS = ("example.com", "mail.example.org", "uni.example.ac.uk", "example.net")
STREETS = ("Baker", "Elm", "Maple Leaf", "Old Mill", "Pennsylvania", "Harbour View")
STREET_WORDS = ("Street", "St.", "Avenue", "Road", "Lane", "Drive", "Court", "Place", "Terrace", "Boulevard")


def email(rng: random.Random) -> str:
    first, last, domain = rng.choice(FIRST), rng.choice(LAST), rng.choice(DOMAINS)
    return rng.choice((f"{first}.{last}@{domain}", f"{first}{rng.randint(1, 99)}@{domain}", f"{first}+fm2@{domain}",
                       f"{first.upper()}.{last.upper()}@{domain.upper()}", f"{first}_{last}@{domain}"))


def phone(rng: random.Random) -> str:
    a, b, c = rng.randint(201, 989), rng.randint(200, 999), rng.randint(0, 9999)
    return rng.choice((f"({a}) {b}-{c:04d}", f"{a}-{b}-{c:04d}", f"{a}.{b}.{c:04d}", f"{a} {b} {c:04d}", f"+1 {a} {b} {c:04d}",
                       f"+44 20 {rng.randint(7000, 7999)} {c:04d}", f"+33 1 {rng.randint(10, 99)} {rng.randint(10, 99)} "
                       f"{rng.randint(10, 99)} {rng.randint(10, 99)}", f"+49 30 {rng.randint(100000, 999999)}"))


def street_address(rng: random.Random) -> str:
    number = rng.choice((str(rng.randint(1, 99999)), f"{rng.randint(1, 300)}{rng.choice('ABC')}"))
    return f"{number} {rng.choice(STREETS)} {rng.choice(STREET_WORDS)}"


def listed_word(rng: random.Random, words: list[str]) -> str:
    word = rng.choice(words)
    return rng.choice((word, word.capitalize(), word.upper()))


PLANTS = ("email", "phone", "street_address", OFFENSIVE)
MISSED_FORMS = {
    "phone": lambda rng: f"020 {rng.randint(7000, 7999)} {rng.randint(0, 9999):04d}",  # a UK number without +44
    "street_address": lambda rng: f"{rng.randint(1, 99)} rue de la {rng.choice(('Paix', 'Gare'))}",  # a French address
    "email": lambda rng: f"{rng.choice(FIRST)} at {rng.choice(DOMAINS)}",  # spelled out, as people hide them
}


def planted(text: str, item: str, rng: random.Random) -> str:
    """The claim with ``item`` before, inside (after its first word) or after it."""
    words = text.split()
    where = rng.randrange(3)
    if where == 0:
        return f"{item} says: {text}"
    if where == 1 and len(words) > 2:
        return " ".join([words[0], f"({item})", *words[1:]])
    return f"{text.rstrip('.')} — {item}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--per-kind", type=int, default=60, help="planted claims of each kind")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_gates", args.record)
    if not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    rows = [json.loads(line) for line in args.fm2.read_text(encoding="utf-8").splitlines() if line.strip()]
    words = load_word_list()
    print(f"{args.fm2.name}: {len(rows)} records, {len(words)} listed words")

    # False alarms on the published release.
    rules = {"every text field (before)": ("written", "quoted"), "written by players (now)": ("written",)}
    for rule, parts in rules.items():
        matches: Counter[str] = Counter()
        records: Counter[str] = Counter()
        for row in rows:
            found = record_findings(row, words)
            kinds: Counter[str] = Counter()
            for part in parts:
                kinds.update(found[part])
            for kind, n in kinds.items():
                gate = "offensive_language" if kind == OFFENSIVE else "personal_data"
                matches[gate] += n
                records[f"{gate}/{kind}"] += 1
        for gate in ("personal_data", "offensive_language"):
            detail = ", ".join(f"{key.split('/')[1]} {n}" for key, n in sorted(records.items()) if key.startswith(gate)) or "none"
            print(f"  false alarms, {rule:27s} {gate:19s} {matches[gate]:3d} matches (records by kind: {detail})")
            record.add(f"{args.fm2.name}, {rule}", f"{gate} false alarms", matches[gate], "matches")

    # Recall on the planted set.
    rng = random.Random(args.seed)
    listed = sorted(words)
    makers = {"email": email, "phone": phone, "street_address": street_address, OFFENSIVE: lambda r: listed_word(r, listed)}
    clean = [row for row in rows if not any(record_findings(row, words)["written"].values())]
    print(f"planted set: {args.per_kind} claims per kind, each a dev claim (seed {args.seed}) with one planted item")
    for kind in PLANTS:
        caught = 0
        missed: list[str] = []
        for _ in range(args.per_kind):
            item = makers[kind](rng)
            claim = {**rng.choice(clean)}
            claim["text"] = planted(claim["text"], item, rng)
            if record_findings(claim, words)["written"][kind]:
                caught += 1
            else:
                missed.append(item)
        low, high = wilson(caught, args.per_kind)
        print(f"  recall {kind:15s} {caught:3d}/{args.per_kind} = {caught / args.per_kind:6.1%} (95% CI {low:.1%} to {high:.1%})"
              + (f"; missed e.g. {missed[:3]}" if missed else ""))
        record.add(f"planted set, seed {args.seed}", f"{kind} recall", round(100 * caught / args.per_kind, 1), f"% of {args.per_kind}")
    for kind, make in MISSED_FORMS.items():
        caught = sum(bool(record_findings({"text": planted(rng.choice(clean)["text"], make(rng), rng)}, words)["written"][kind])
                     for _ in range(args.per_kind))
        print(f"  known gap, {kind:15s} e.g. {make(rng)!r}: {caught}/{args.per_kind} caught")


if __name__ == "__main__":
    main()
