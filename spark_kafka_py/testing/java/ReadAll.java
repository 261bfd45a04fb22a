/*
 * Reads every record of some topics with Apache Kafka's Java KafkaConsumer, used by
 * spark_kafka_py.testing.tools.read_all as the reference reader of what a producer wrote.
 *
 *   ReadAll <bootstrap> <isolation.level> <topic>[,<topic>...] [<consumer config>=<value>]...
 *
 * Every partition of every topic is assigned (no group, nothing committed) and read from its
 * beginning offset up to its end offset taken once at the start (KafkaConsumer.endOffsets: the
 * high watermark under read_uncommitted, the last stable offset under read_committed), so the
 * program ends when everything present at its start has been read, with no idle timeout.
 * Records at or past the end offset (written while it runs) are not printed.
 *
 * Output (stdout, UTF-8): one JSON object per record, as polled (offset order within a
 * partition; partitions interleaved):
 *
 *   {"topic":"t","partition":0,"offset":5,"timestamp":1700000000000,"timestampType":"CreateTime",
 *    "key":"<Base64>"|null,"value":"<Base64>"|null,"headers":[["<Base64 of the UTF-8 key>",
 *    "<Base64>"|null],...]}
 *
 * An unknown topic (no partitions) is an error: exit code 2 with a message on stderr (through
 * Kafka's Exit.exit, so that in the tool server, java/ToolServer.java, it ends the run only).
 * Compiled at first use by spark_kafka_py.testing.tools into the cache directory.
 */
package sparkkafkapy;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Exit;

public final class ReadAll {
    private static final Duration POLL = Duration.ofMillis(500);

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: ReadAll <bootstrap> <isolation.level> <topics> [k=v]...");
            Exit.exit(2);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("isolation.level", args[1]);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        for (int i = 3; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("ReadAll: bad config " + args[i] + ", expected key=value");
                Exit.exit(2);
            }
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Writer out = new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String topic : args[2].split(",")) {
                List<PartitionInfo> infos = consumer.partitionsFor(topic);
                if (infos == null || infos.isEmpty()) {
                    System.err.println("ReadAll: unknown topic " + topic);
                    Exit.exit(2);
                }
                for (PartitionInfo info : infos) {
                    tps.add(new TopicPartition(topic, info.partition()));
                }
            }
            tps.sort(Comparator.comparing(TopicPartition::topic)
                .thenComparingInt(TopicPartition::partition));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            List<TopicPartition> open = new ArrayList<>();
            for (TopicPartition tp : tps) {
                if (consumer.position(tp) < end.get(tp)) {
                    open.add(tp);
                } else {
                    consumer.pause(List.of(tp));
                }
            }
            while (!open.isEmpty()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() < end.get(tp)) {
                        write(out, r);
                    }
                }
                List<TopicPartition> done = new ArrayList<>();
                for (TopicPartition tp : open) {
                    if (consumer.position(tp) >= end.get(tp)) {
                        done.add(tp);
                    }
                }
                consumer.pause(done);
                open.removeAll(done);
            }
        }
        out.flush();
    }

    private static void write(Writer out, ConsumerRecord<byte[], byte[]> r) throws IOException {
        StringBuilder sb = new StringBuilder(256);
        sb.append("{\"topic\":\"").append(r.topic()).append('"');
        sb.append(",\"partition\":").append(r.partition());
        sb.append(",\"offset\":").append(r.offset());
        sb.append(",\"timestamp\":").append(r.timestamp());
        sb.append(",\"timestampType\":\"").append(r.timestampType().name).append('"');
        sb.append(",\"key\":").append(b64(r.key()));
        sb.append(",\"value\":").append(b64(r.value()));
        sb.append(",\"headers\":[");
        boolean first = true;
        for (Header h : r.headers()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            sb.append('[').append(b64(h.key().getBytes(StandardCharsets.UTF_8)))
                .append(',').append(b64(h.value())).append(']');
        }
        sb.append("]}\n");
        out.write(sb.toString());
    }

    private static String b64(byte[] data) {
        return data == null ? "null" : "\"" + Base64.getEncoder().encodeToString(data) + "\"";
    }
}
