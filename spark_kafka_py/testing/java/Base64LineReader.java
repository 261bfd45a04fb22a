/*
 * A record reader for Apache Kafka's ConsoleProducer (org.apache.kafka.tools.ConsoleProducer
 * --line-reader ...), used by spark_kafka_py.testing.tools.produce.
 *
 * Kafka's own LineMessageReader cannot choose a partition or a timestamp per record, and its
 * separators must not occur in the data. This reader takes one record per line, fields separated
 * by a TAB, every field either "-" (absent / null) or "=" followed by the standard Base64 of its
 * bytes (so any bytes, including TABs and newlines, travel safely):
 *
 *   partition  timestamp  key  value  [header-key  header-value]...
 *
 * partition and timestamp are decimal ints when present ("=" prefix, not Base64): "=3", "=1700000000000".
 * Header keys are never null. Blank lines are ignored; a malformed line is an error (the producer
 * stops with a non-zero exit code).
 *
 * Compiled at first use by spark_kafka_py.testing.tools into the cache directory.
 */
package sparkkafkapy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.tools.api.RecordReader;

public final class Base64LineReader implements RecordReader {
    private String topic;

    @Override
    public void configure(Map<String, ?> configs) {
        Object t = configs.get("topic");
        if (t == null) {
            throw new KafkaException("Base64LineReader: no topic configured");
        }
        topic = t.toString();
    }

    @Override
    public Iterator<ProducerRecord<byte[], byte[]>> readRecords(InputStream in) {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
        return new Iterator<>() {
            private ProducerRecord<byte[], byte[]> next;
            private long lineNo;

            @Override
            public boolean hasNext() {
                if (next != null) {
                    return true;
                }
                try {
                    String line;
                    do {
                        line = reader.readLine();
                        lineNo++;
                        if (line == null) {
                            return false;
                        }
                    } while (line.isEmpty());
                    next = parse(line, lineNo);
                    return true;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public ProducerRecord<byte[], byte[]> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                ProducerRecord<byte[], byte[]> r = next;
                next = null;
                return r;
            }
        };
    }

    private ProducerRecord<byte[], byte[]> parse(String line, long lineNo) {
        String[] f = line.split("\t", -1);
        if (f.length < 4 || f.length % 2 != 0) {
            throw new KafkaException("Base64LineReader: line " + lineNo + " has " + f.length
                + " fields, expected 4 + 2 per header");
        }
        Integer partition = f[0].equals("-") ? null : Integer.valueOf(number(f[0], lineNo));
        Long timestamp = f[1].equals("-") ? null : Long.valueOf(number(f[1], lineNo));
        byte[] key = bytes(f[2], lineNo);
        byte[] value = bytes(f[3], lineNo);
        RecordHeaders headers = new RecordHeaders();
        for (int i = 4; i < f.length; i += 2) {
            byte[] hk = bytes(f[i], lineNo);
            if (hk == null) {
                throw new KafkaException("Base64LineReader: line " + lineNo + ": null header key");
            }
            headers.add(new String(hk, StandardCharsets.UTF_8), bytes(f[i + 1], lineNo));
        }
        return new ProducerRecord<>(topic, partition, timestamp, key, value, headers);
    }

    private static String number(String field, long lineNo) {
        if (!field.startsWith("=")) {
            throw new KafkaException("Base64LineReader: line " + lineNo + ": bad number " + field);
        }
        return field.substring(1);
    }

    private static byte[] bytes(String field, long lineNo) {
        if (field.equals("-")) {
            return null;
        }
        if (!field.startsWith("=")) {
            throw new KafkaException("Base64LineReader: line " + lineNo + ": bad field " + field);
        }
        return Base64.getDecoder().decode(field.substring(1));
    }
}
