"""Queries run so often that Django's building and compiling them costs more CPU than
running them.

Django builds a queryset (every ``filter`` resolves its lookups) and compiles it to SQL again
on every run. For the few queries every socket and every vote runs (the round, its owner,
the socket's user, the vote's checks) that cost more than the trip to the database. These
helpers take a function that builds the queryset, call it once per name, keep its SQL and
what Django made of its columns, and afterwards only run the SQL with the new parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, connections, models, router
from django.db.models.signals import post_save, pre_save
from django.db.models import QuerySet
from django.db.models.query import get_related_populators
from django.db.transaction import TransactionManagementError

_DJANGO = object()
"""Kept for a query whose parameters Django adapts (its SQL cannot be reused as is)."""

_COMPILED: dict[str, Any] = {}


def compiled_rows(name: str, build: Callable[[], QuerySet[Any]], params: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of the queryset ``build()`` makes (a ``values_list`` of columns the database
    returns as Python wants them, or an ``exists()`` query), built and compiled once per
    ``name``. ``params`` are the values the SQL takes, in its order; the first compile checks
    them against Django's own, and where they differ (a database that wants them adapted)
    every run is Django's."""
    compiled = _COMPILED.get(name)
    if compiled is None:
        queryset = build()
        sql, django_params = queryset.query.get_compiler(queryset.db).as_sql()
        compiled = _COMPILED[name] = (queryset.db, sql) if list(django_params) == params else _DJANGO
    if compiled is _DJANGO:
        return [tuple(row) for row in build()]
    alias, sql = compiled
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


# Stand-ins for ``prepared_rows``' values while its query is built: no real key or label is
# one of them, so each is found by equality among the parameters Django compiled.
_STAND_IN_INT = -(2**31) + 7919  # and down: inside a 32-bit column's range, which Django checks
_STAND_IN_FLOAT = -7.919e300
_STAND_IN_TEXT = "fm2-stand-in-{}-7919"
_STAND_IN_TIME = datetime(1907, 9, 19, 7, 9, 19)


def prepared_rows(name: str, build: Callable[..., QuerySet[Any]], **values: Any) -> list[tuple[Any, ...]]:
    """The rows of ``build(**values)`` (a ``values_list`` queryset), its query built and
    compiled once per ``name`` and shape of the values: the first time with a stand-in for
    each value (an int, a float, a text or a datetime; a list: for each of its items), whose places among the compiled parameters
    are kept; each later run puts the values in those places and runs the SQL. Each column
    comes back converted as Django converts it.

    For the queries whose building costs more than their run and whose shape does not depend
    on the values (the dealer's, over a pool of claims built of half a dozen subqueries). So
    ``build`` may not read anything with the values (it sees only stand-ins) nor put them in
    the SQL itself (a slice's bounds); a list's length is part of the shape (a name per
    length). Where Django puts a value in the SQL or changes it (``icontains`` wraps it in
    ``%``), or a value never shows among the parameters, every run is Django's."""
    shape = ":".join(f"{key}{'*' + str(len(value)) if isinstance(value, (list, tuple)) else ''}" for key, value in values.items())
    key = (name, shape)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _COMPILED[key] = _prepare(build, values)
    if compiled is _DJANGO:
        return [tuple(row) for row in build(**values)]
    alias, sql, slots, converters = compiled
    params = [values[slot] if isinstance(slot, str) else values[slot[0]][slot[1]] if isinstance(slot, tuple) else slot.value for slot in slots]
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [tuple(_converted(row, converters, connection)) for row in rows] if converters else rows


def _converted(row: Any, converters: dict[int, Any], connection: Any) -> list[Any]:
    """The row's columns as Django's converters make them (``SQLCompiler.apply_converters``)."""
    row = list(row)
    for position, (functions, expression) in converters.items():
        value = row[position]
        for function in functions:
            value = function(value, expression, connection)
        row[position] = value
    return row


class _Constant:
    """A parameter of a prepared query that is the same on every run."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _prepare(build: Callable[..., QuerySet[Any]], values: dict[str, Any]) -> Any:
    """``prepared_rows``' plan: the SQL, each parameter's source (a value's name, a list
    item's (name, index), or a ``_Constant``), the columns' converters; ``_DJANGO`` when the
    values cannot be told apart from the rest."""
    stand_ins: dict[Any, Any] = {}
    counter = iter(range(10**6))

    def stand_in(value: Any, slot: Any) -> Any:
        number = next(counter)
        if isinstance(value, datetime):  # an aware one where Django wants it aware; SQLite's adapted to text: Django's
            made: Any = _STAND_IN_TIME.replace(tzinfo=value.tzinfo) + timedelta(microseconds=number)
        elif isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return None
        else:
            made = (
                _STAND_IN_INT - number if isinstance(value, int) else _STAND_IN_FLOAT * (1 + number) if isinstance(value, float) else _STAND_IN_TEXT.format(number)
            )
        stand_ins[made] = slot
        return made

    built: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, (list, tuple)):
            built[key] = [stand_in(item, (key, index)) for index, item in enumerate(value)]
            if any(item is None for item in built[key]):
                return _DJANGO
        else:
            built[key] = stand_in(value, key)
            if built[key] is None:
                return _DJANGO
    try:
        queryset = build(**built)
        compiler = queryset.query.get_compiler(queryset.db)
        sql, params = compiler.as_sql()
    except Exception:  # noqa: BLE001 - refused with stand-ins (a negative slice, an empty result): Django's with the values
        return _DJANGO
    slots: list[Any] = []
    for param in params:
        if isinstance(param, (int, float, str, datetime)) and not isinstance(param, bool) and param in stand_ins:
            slots.append(stand_ins[param])
        elif isinstance(param, str) and "fm2-stand-in-" in param:
            return _DJANGO  # a value Django changed
        else:
            slots.append(_Constant(param))
    used = {slot for slot in slots if not isinstance(slot, _Constant)}
    if used != set(stand_ins.values()) or any(str(made) in sql for made in stand_ins):
        return _DJANGO  # a value missing from the parameters, or written in the SQL
    converters = compiler.get_converters([column[0] for column in compiler.select[: compiler.col_count]])
    return queryset.db, sql, slots, converters


def compiled_instance(
    name: str,
    build: Callable[[], QuerySet[models.Model]],
    pk: Any,
    *,
    params: list[Any] | None = None,
    rewrite: Callable[[str], str] | None = None,
    by: str = "pk",
) -> models.Model | None:
    """``build().filter(pk=pk).first()`` without ordering, built and compiled once per
    ``name``; ``by`` names another unique field to find the row by (``user_id``: a
    one-to-one row of a player's). Kept from the first compile: the SQL, whose one parameter is the key, the
    columns' converters, and what Django made of the columns (which fill the instance, which
    its ``select_related`` rows, which its annotations); each run reads the row and builds the
    instance and its related objects from it as ``QuerySet`` does (``ModelIterable``).

    ``params``: every value the SQL takes, in its order, when ``build()`` brings its own
    beside the key (an annotation's): checked against Django's own at the first compile, as
    ``compiled_rows`` checks them. ``rewrite``: a change to the compiled SQL for what the ORM
    cannot say (two lock strengths in one statement: ``voting.services``); a query with one
    is run with its rewritten SQL even when its SQL cannot be kept (compiled again each run)."""
    wanted = [pk] if params is None else list(params)
    compiled = _COMPILED.get(name)
    if compiled is None:
        plan, django_params = _instance_plan(build().filter(**{by: pk}).order_by(), rewrite)
        compiled = _COMPILED[name] = plan if django_params == wanted else _DJANGO  # else: parameters Django adapts
    if compiled is _DJANGO:
        if rewrite is None:
            return next(iter(build().filter(**{by: pk}).order_by()), None)
        compiled, wanted = _instance_plan(build().filter(**{by: pk}).order_by(), rewrite)
    alias, model, sql, converters, start, end, fields, populators, for_update, annotations = compiled
    connection = connections[alias]
    if for_update and connection.get_autocommit():  # as Django's compile refuses it
        raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
    with connection.cursor() as cursor:
        cursor.execute(sql, wanted)
        row = cursor.fetchone()
    if row is None:
        return None
    if converters:
        row = _converted(row, converters, connection)
    instance = model.from_db(alias, fields, row[start:end])
    for populator in populators:
        populator.populate(row, instance)
    for attribute, position in annotations.items():
        setattr(instance, attribute, row[position])
    return instance


def _instance_plan(queryset: QuerySet[models.Model], rewrite: Callable[[str], str] | None) -> tuple[tuple[Any, ...], list[Any]]:
    """What ``compiled_instance`` keeps of a queryset's compile, and the parameters Django gave
    its SQL."""
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    info = compiler.klass_info
    start, end = info["select_fields"][0], info["select_fields"][-1] + 1
    fields = [column[0].target.attname for column in compiler.select[start:end]]
    converters = compiler.get_converters([column[0] for column in compiler.select[: compiler.col_count]])
    populators = get_related_populators(info, compiler.select, queryset.db)
    plan = (
        queryset.db,
        queryset.model,
        rewrite(sql) if rewrite is not None else sql,
        converters,
        start,
        end,
        fields,
        populators,
        bool(queryset.query.select_for_update),
        dict(compiler.annotation_col_map),
    )
    return plan, list(params)


def compiled_create(instance: models.Model) -> models.Model:
    """``instance.save(force_insert=True)`` for a new instance (no primary key yet), its INSERT
    written once per model and database: Django's save builds and compiles the INSERT, and
    walks its signals and parents, on every call (a fifth of a vote's time in a profile). Each
    value is prepared as the save prepares it (``pre_save`` with ``add``, then
    ``get_db_prep_save``); the key comes back in the same statement (``RETURNING``) where the
    database can, else from the cursor. Django saves it instead when a shortcut could skip
    something: ``pre_save`` or ``post_save`` receivers, an inherited model, a field with a
    database default or generated by the database, or a key already set."""
    model = type(instance)
    meta = model._meta
    alias = router.db_for_write(model, instance=instance)
    connection = connections[alias]
    key = ("insert", alias, meta.label)
    compiled = _COMPILED.get(key)
    if compiled is None and (
        meta.parents or any(getattr(field, "generated", False) or field.db_default is not models.NOT_PROVIDED for field in meta.concrete_fields)
    ):
        compiled = _COMPILED[key] = _DJANGO  # the model's shape: looked at once
    if compiled is _DJANGO or instance.pk is not None or pre_save.has_listeners(model) or post_save.has_listeners(model):
        instance.save(force_insert=True)
        return instance
    if compiled is None:
        quote = connection.ops.quote_name
        targets = [field for field in meta.local_concrete_fields if field is not meta.auto_field]
        columns = ", ".join(quote(field.column) for field in targets)
        values = ", ".join(["%s"] * len(targets))
        returning = bool(connection.features.can_return_columns_from_insert and meta.auto_field)
        sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({values})"
        compiled = _COMPILED[key] = (sql + f" RETURNING {quote(meta.pk.column)}" if returning else sql, targets, returning)
    sql, targets, returning = compiled
    params = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in targets]  # as Model._save_table
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if meta.auto_field is not None:
            pk = cursor.fetchone()[0] if returning else connection.ops.last_insert_id(cursor, meta.db_table, meta.pk.column)
            setattr(instance, meta.pk.attname, pk)
    instance._state.adding, instance._state.db = False, alias
    return instance


def compiled_update(instance: models.Model, fields: tuple[str, ...]) -> None:
    """``instance.save(update_fields=fields)``, its UPDATE written once per model, fields and
    database: Django's save builds and compiles the UPDATE on every call. Each value is
    prepared for the database as the save prepares it (``get_db_prep_save``). A model with
    ``pre_save`` or ``post_save`` receivers is saved by Django, so no receiver is skipped; like
    Django's, an update that finds no row raises ``DatabaseError``."""
    model = type(instance)
    if pre_save.has_listeners(model) or post_save.has_listeners(model):
        instance.save(update_fields=list(fields))
        return
    alias = router.db_for_write(model, instance=instance)
    connection = connections[alias]
    key = ("update", alias, model._meta.label, fields)
    compiled = _COMPILED.get(key)
    if compiled is None:
        meta, quote = model._meta, connection.ops.quote_name
        targets = [meta.get_field(name) for name in fields]
        columns = ", ".join(f"{quote(field.column)} = %s" for field in targets)
        compiled = _COMPILED[key] = (f"UPDATE {quote(meta.db_table)} SET {columns} WHERE {quote(meta.pk.column)} = %s", targets)
    sql, targets = compiled
    params = [field.get_db_prep_save(field.pre_save(instance, False), connection) for field in targets]  # as Model._save_table
    params.append(model._meta.pk.get_db_prep_save(instance.pk, connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")
