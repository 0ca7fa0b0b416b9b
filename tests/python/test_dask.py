"""aurorapack.dask.stack on a real dask.distributed LocalCluster of worker
processes: 200 frames, each decoded in its own task, equal to reading them
one by one; a bad frame fails its task naming the file."""
import numpy as np
import pytest

import aurorapack
import aurorapack.dask
from conftest import simulate

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    d = tmp_path_factory.mktemp("night")
    paths = []
    for i in range(200):
        f = simulate(d / f"f{i:03d}.fits", 96, 24, seed=7, index=i)
        paths.append(aurorapack.pack(f))
        f.unlink()
    return paths


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_stack_on_a_local_cluster_equals_reading_one_by_one(night, client):
    arr = aurorapack.dask.stack(night)
    assert arr.shape == (200, 24, 96) and arr.dtype == np.uint16
    assert arr.numblocks == (200, 1, 1)  # one task per frame
    want = np.stack([aurorapack.read(p) for p in night])
    got = arr.compute()
    assert np.array_equal(got, want)
    # the worked example of docs/LIBRARY.md: the mean spectrum per column over the night
    mean_spectrum = arr.mean(axis=(0, 1)).compute()
    assert np.allclose(mean_spectrum, want.mean(axis=(0, 1)))
    # the frames were decoded in the workers' processes, not here
    workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2


def test_a_frame_of_another_shape_fails_naming_it(night, client, tmp_path):
    odd = aurorapack.pack(simulate(tmp_path / "odd.fits", 32, 8))
    arr = aurorapack.dask.stack([night[0], odd])
    with pytest.raises(aurorapack.AurorapackError, match="odd.fits.aurp: frame is"):
        arr.compute()
