"""Export files through Django's ``exports`` storage: this host's disk by default, an
S3-compatible object store when configured (several hosts, no shared disk)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from foolgame.dataset.storage import ExportsFileSystemStorage, exports_storage
from tests.dataset.conftest import client_for
from tests.factories import UserFactory
from tests.procfile_server import free_port

pytestmark = [pytest.mark.django_db]

BUCKET = "fm2-exports-test"


@pytest.fixture
def object_store(settings, tmp_path: Path):
    """moto's S3 server on loopback, a bucket, and the ``exports`` storage pointed at it."""
    boto3 = pytest.importorskip("boto3")
    server_module = pytest.importorskip("moto.server")
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    credentials = {"aws_access_key_id": "fm2test", "aws_secret_access_key": "fm2test-secret", "region_name": "us-east-1"}
    client = boto3.client("s3", endpoint_url=endpoint, **credentials)
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": BUCKET, "location": "exports", "endpoint_url": endpoint, "addressing_style": "path",
                        "region_name": "us-east-1", "access_key": "fm2test", "secret_key": "fm2test-secret",
                        "file_overwrite": True, "default_acl": None},
        },
    }
    try:
        yield client
    finally:
        server.stop()


@pytest.fixture
def researcher(db):
    user = UserFactory(username="rhea")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


def test_the_default_exports_storage_is_this_hosts_exports_dir(exports_dir) -> None:
    storage = exports_storage()
    assert isinstance(storage, ExportsFileSystemStorage)
    assert storage.path("export-3/train.jsonl") == str(Path(exports_dir).resolve() / "export-3" / "train.jsonl")


def test_an_export_written_to_the_object_store_downloads_from_another_host_with_its_checksums(
    world, researcher, object_store, settings, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    """The worker host writes the export (its scratch folder under its own EXPORTS_DIR); a web
    host with an empty disk of its own serves every file, each matching the manifest's sha256."""
    settings.EXPORTS_DIR = tmp_path / "worker-disk"
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports"), {"seed": 4}, format="json")
    assert response.status_code == 201, response.json()
    export_id = response.json()["id"]
    # Nothing stays on the worker's disk: the scratch folder went once uploaded.
    assert not any(Path(settings.EXPORTS_DIR).rglob("*.*"))
    stored = {item["Key"] for item in object_store.list_objects_v2(Bucket=BUCKET, Prefix=f"exports/export-{export_id}/")["Contents"]}

    settings.EXPORTS_DIR = tmp_path / "web-disk"  # another host: its own, empty disk
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert detail["status"] == "done", detail
    files = {f["name"]: f for f in detail["files"]}
    assert stored == {f"exports/export-{export_id}/run-1/{name}" for name in files}

    def download(name: str) -> bytes:
        response = client.get(files[name]["url"])
        assert response.status_code == 200, name
        return b"".join(response.streaming_content)

    manifest = json.loads(download("manifest.json"))
    listed = {entry["name"]: entry for entry in manifest["files"]}
    assert set(listed) == set(files) - {"manifest.json", "SHA256SUMS"}
    for name, entry in listed.items():
        body = download(name)
        assert (len(body), hashlib.sha256(body).hexdigest()) == (entry["size"], entry["sha256"]), name
        assert files[name]["size"] == len(body)
    # SHA256SUMS, downloaded from the store, checks every file the manifest's way, the manifest too.
    sums = dict(reversed(line.split("  ", 1)) for line in download("SHA256SUMS").decode().splitlines())
    assert sums == {name: hashlib.sha256(download(name)).hexdigest() for name in set(files) - {"SHA256SUMS"}}
    assert not Path(settings.EXPORTS_DIR).exists()
    # A name outside the export is still a 404, from the object store as from the disk.
    assert client.get(reverse("export-file", args=[export_id, "secret.txt"])).status_code == 404


def test_a_second_run_of_an_export_replaces_its_files_in_the_object_store(world, object_store, settings, tmp_path: Path) -> None:
    from foolgame.dataset.models import Export
    from foolgame.dataset.services import export_job_run

    settings.EXPORTS_DIR = tmp_path / "worker-disk"
    export = Export.objects.create(options={"seed": 1})
    object_store.put_object(Bucket=BUCKET, Key=f"exports/export-{export.pk}/leftover.tmp", Body=b"x")
    object_store.put_object(Bucket=BUCKET, Key=f"exports/export-{export.pk}/train.jsonl", Body=b'{"half": "writ')
    assert export_job_run(export_id=export.pk) is True
    export.refresh_from_db()
    # moto's store outlives a test (its state is the process's): read this export's keys only.
    stored = {item["Key"] for item in object_store.list_objects_v2(Bucket=BUCKET, Prefix=f"exports/export-{export.pk}/")["Contents"]}
    # Only this run's files stay: the leftover and the half-written file of an earlier run went.
    assert stored == {f"exports/export-{export.pk}/run-1/{f['name']}" for f in export.files}
    train = object_store.get_object(Bucket=BUCKET, Key=f"exports/export-{export.pk}/run-1/train.jsonl")["Body"].read()
    assert b'"half"' not in train


def test_an_export_uploads_with_no_transaction_open_and_a_run_that_lost_the_job_leaves_nothing(
    world, object_store, settings, tmp_path: Path, monkeypatch
) -> None:
    """The upload of hundreds of megabytes happens before the export's row is locked (a slow
    store holds no lock and no transaction); a run taken over while it uploaded deletes its own
    uploads and leaves the winner's files alone."""
    from django.db import connection

    from foolgame.dataset import storage as storage_module
    from foolgame.dataset.models import Export
    from foolgame.dataset.services import export_job_run

    settings.EXPORTS_DIR = tmp_path / "worker-disk"
    store = storage_module.exports_storage()
    in_transaction = []
    real_save = type(store)._save

    def recording_save(self, name, content):
        in_transaction.append(len(connection.atomic_blocks) > outside)
        return real_save(self, name, content)

    monkeypatch.setattr(type(store), "_save", recording_save)
    export = Export.objects.create(options={"seed": 1})
    outside = len(connection.atomic_blocks)  # the test's own transaction, if any
    assert export_job_run(export_id=export.pk) is True
    assert in_transaction and not any(in_transaction), in_transaction

    # A second run (the first one's worker looked dead) loses the job while it uploads.
    mine = f"exports/export-{export.pk}/"
    winner_keys = {item["Key"] for item in object_store.list_objects_v2(Bucket=BUCKET, Prefix=mine)["Contents"]}
    Export.objects.filter(pk=export.pk).update(status=Export.Status.PENDING, files=[])
    real_upload = storage_module.export_upload

    def upload_then_lose(**kwargs):
        keys = real_upload(**kwargs)
        Export.objects.filter(pk=export.pk).update(owner="another-host:1:abc")
        return keys

    monkeypatch.setattr("foolgame.dataset.jobs.export_upload", upload_then_lose)
    assert export_job_run(export_id=export.pk) is False
    keys_after = {item["Key"] for item in object_store.list_objects_v2(Bucket=BUCKET, Prefix=mine)["Contents"]}
    assert keys_after == winner_keys  # run-2's uploads went; run-1's stayed
    assert all("/run-1/" in key for key in keys_after)
