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
    stored = {item["Key"] for item in object_store.list_objects_v2(Bucket=BUCKET)["Contents"]}

    settings.EXPORTS_DIR = tmp_path / "web-disk"  # another host: its own, empty disk
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert detail["status"] == "done", detail
    files = {f["name"]: f for f in detail["files"]}
    assert stored == {f"exports/export-{export_id}/{name}" for name in files}

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
    keys = {item["Key"].rsplit("/", 1)[-1] for item in object_store.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert keys == {f["name"] for f in export.files}
    train = object_store.get_object(Bucket=BUCKET, Key=f"exports/export-{export.pk}/train.jsonl")["Body"].read()
    assert b'"half"' not in train
