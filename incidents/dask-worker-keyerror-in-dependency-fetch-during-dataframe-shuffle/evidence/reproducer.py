import pandas as pd
import numpy as np

import dask.dataframe as dd
from dask.dataframe.shuffle import shuffle
from distributed import wait
from distributed import Client, LocalCluster

nparts = 100
max_branch = 100
data_size = nparts * max_branch


def main(client):
    df = pd.DataFrame({"x": np.arange(data_size)})
    ddf = dd.from_pandas(df, npartitions=nparts)
    ddf = ddf.persist(optimize_graph=False)
    wait(ddf)
    result = shuffle(ddf, "x", shuffle="tasks", max_branch=max_branch)
    result = result.persist()
    wait(result)
    print(len(result))


if __name__ == "__main__":
    with LocalCluster() as cluster, Client(cluster) as client:
        main(client)
