/*
 * A member of a consumer group made of Apache Kafka's Java KafkaConsumer, for tests in which a
 * Java consumer shares a group with spark-kafka-py queries (classic or KIP-848 protocol).
 *
 *   GroupConsumer <bootstrap> <group> <topic> [<consumer config>=<value>]...
 *
 * It subscribes to <topic> (auto.offset.reset=earliest, enable.auto.commit=false unless given)
 * and loops: poll (200 ms), print the polled records, flush stdout, then commitSync() the
 * polled positions. A record is therefore printed before its offset is committed: a process
 * killed in between leaves it to be read again by the next owner (at-least-once), a process
 * stopped cleanly commits everything it printed. Extra arguments are consumer configs, e.g.
 * group.protocol=consumer (KIP-848) or group.remote.assignor=uniform.
 *
 * Output (stdout, UTF-8), one line per event, tab-separated:
 *
 *   ASSIGNED <partition>,<partition>...      onPartitionsAssigned (partitions added)
 *   REVOKED <partition>,...                  onPartitionsRevoked (after a commit of them)
 *   LOST <partition>,...                     onPartitionsLost (fenced: nothing committed)
 *   R <partition> <offset> <value as UTF-8>  one record
 *   CLOSED                                   after close() (the member left the group)
 *
 * Stop: a line "stop" (or end of file) on stdin wakes the consumer up; it commits what it
 * printed, closes (LeaveGroup / a leaving heartbeat) and exits 0. Errors: exit code 2.
 */
package sparkkafkapy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class GroupConsumer {
    private static final Duration POLL = Duration.ofMillis(200);

    private static String partitions(Collection<TopicPartition> tps) {
        return tps.stream()
            .map(TopicPartition::partition)
            .sorted()
            .map(String::valueOf)
            .collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: GroupConsumer <bootstrap> <group> <topic> [k=v]...");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        for (int i = 3; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("GroupConsumer: bad config " + args[i] + ", expected key=value");
                System.exit(2);
            }
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("stop")) {
                    // wait for "stop" or the end of stdin
                }
            } catch (IOException e) {
                // stdin closed: stop as well
            }
            consumer.wakeup();
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        try {
            consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    if (!revoked.isEmpty()) {
                        consumer.commitSync();
                        out.println("REVOKED\t" + partitions(revoked));
                        out.flush();
                    }
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                    if (!assigned.isEmpty()) {
                        out.println("ASSIGNED\t" + partitions(assigned));
                        out.flush();
                    }
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> lost) {
                    if (!lost.isEmpty()) {
                        out.println("LOST\t" + partitions(lost));
                        out.flush();
                    }
                }
            });
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String value = r.value() == null
                        ? "" : new String(r.value(), StandardCharsets.UTF_8);
                    out.println("R\t" + r.partition() + "\t" + r.offset() + "\t" + value);
                }
                out.flush();
                if (!records.isEmpty()) {
                    consumer.commitSync();
                }
            }
        } catch (WakeupException e) {
            // "stop" on stdin
        } catch (RuntimeException e) {
            e.printStackTrace();
            System.exit(2);
        }
        try {
            consumer.commitSync();
        } catch (WakeupException e) {
            // the wakeup of "stop" came after the poll it was meant for had returned (the
            // consumer then raises it at its next blocking call); it is spent now
            consumer.commitSync();
        }
        consumer.close();
        out.println("CLOSED");
        out.flush();
    }
}
