"""The schema registry's client: Confluent's Schema Registry REST API, over HTTP(S).

Beside ``client/`` (Kafka's own protocol) and below ``spark/``: it may not import ``client/``,
``admin/``, ``consumer/``, ``producer/``, ``spark/``, ``testing/`` or pyspark
(``tests/test_layers.py``). :class:`SchemaRegistryClient` speaks to Confluent Schema Registry,
Apicurio Registry's ``/apis/ccompat/v7`` and Karapace alike; its settings carry Confluent's
serializer names (:mod:`.settings`); schemas by id are kept per process (:mod:`.cache`).

Example::

    client = SchemaRegistryClient.from_options({"schema.registry.url": "http://registry:8081"})
    schema_id = client.register("orders-value", '{"type": "string"}')
    client.schema_by_id(schema_id).schema_str
"""

from spark_kafka_py.schema_registry.cache import LruCache
from spark_kafka_py.schema_registry.client import (
    PROCESS_CACHE,
    RegisteredSchema,
    RetryFactory,
    RetryPolicy,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
)
from spark_kafka_py.schema_registry.settings import RegistrySettings, parse_settings, redact_url

__all__ = [
    "PROCESS_CACHE",
    "LruCache",
    "RegisteredSchema",
    "RegistrySettings",
    "RetryFactory",
    "RetryPolicy",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
    "parse_settings",
    "redact_url",
]
