"""Payload formats, sans-I/O: the registry wire framings, Avro and JSON (Protobuf to come).

- :mod:`.framing`: Confluent's wire format (magic byte 0x00, 4-byte schema id, payload) and
  the header schema ids (``__value_schema_id``: an id or a GUID).
- :mod:`.avro.schema`: Avro schema JSON -> an immutable model, hostile input bounded.
- :mod:`.avro.types`: the model -> Spark types (as Arrow, Spark JSON, DDL), as spark-avro.
- :mod:`.avro.decoder`: payloads of one writer schema -> one Arrow array of the reader's type.
- :mod:`.avro.column`: a column of framed values of mixed writer schemas -> one array.
- :mod:`.avro.encoder`: one Arrow array -> payloads of one writer schema (the sink's).
- :mod:`.avro.derive`: an Avro schema derived from an Arrow type, as spark-avro derives it.
- :mod:`.json.schema`: a JSON Schema document -> a Spark type (as Arrow, Spark JSON, DDL).
- :mod:`.json.decode`: a column of JSON documents -> one Arrow array, as Spark's ``from_json``.
- :mod:`.json.encode`: one Arrow array -> JSON documents, as Spark's ``to_json``.
- :mod:`.ddl`: Spark's DDL for types (``valueSchema``) -> Spark's JSON form of the type.
- :mod:`.errors`: the typed errors (all :class:`~spark_kafka_py.errors.KafkaError`).

Nothing here opens sockets or imports pyspark (``tests/test_layers.py``).
"""
