"""Many recordings and many tables on Ray: the only package that imports ``ray``.

:mod:`pipeline.cluster.runtime` starts or joins a Ray instance (``--ray auto`` or an address) and
says in one line when Ray is missing; the batch review and the fleet build on it. Ray is the
``cluster`` extra (``pip install -e '.[cluster]'``): nothing outside this package needs it.
"""
