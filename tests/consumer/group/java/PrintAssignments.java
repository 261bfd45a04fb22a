// Test-only: prints what Kafka's Java assignors assign for a table of cases, so that
// tests/consumer/group/test_assignors.py can compare spark_kafka_py's assignors with them.
//
// Usage: java -cp <kafka jars>:<dir> PrintAssignments < cases
// stdin, one command a line, fields separated by single spaces:
//   CASE <assignor: range|roundrobin|cooperative-sticky> <case name>
//   TOPIC <topic> <partition count>
//   MEMBER <member id> <group.instance.id or -> <topic,topic,...> [<owned t:p,t:p,...> <generation>]
//   END
// stdout, per member of each case: <case name> <member id> <t:p,t:p,...> (or "-" if empty);
//   if the assignor throws: <case name> ! <exception class>
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class PrintAssignments {
    private static List<TopicPartition> parsePartitions(String text) {
        List<TopicPartition> out = new ArrayList<>();
        if (text.equals("-")) return out;
        for (String item : text.split(",")) {
            int colon = item.lastIndexOf(':');
            out.add(new TopicPartition(item.substring(0, colon), Integer.parseInt(item.substring(colon + 1))));
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Node node = new Node(0, "localhost", 9092);
        String assignorName = null;
        String caseName = null;
        List<PartitionInfo> partitions = new ArrayList<>();
        Map<String, Subscription> members = new TreeMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] f = line.split(" ");
            switch (f[0]) {
                case "CASE":
                    assignorName = f[1];
                    caseName = f[2];
                    partitions = new ArrayList<>();
                    members = new TreeMap<>();
                    break;
                case "TOPIC":
                    for (int p = 0; p < Integer.parseInt(f[2]); p++) {
                        partitions.add(new PartitionInfo(f[1], p, node, new Node[] {node}, new Node[] {node}));
                    }
                    break;
                case "MEMBER": {
                    List<String> topics = Arrays.asList(f[3].split(","));
                    List<TopicPartition> owned = f.length > 4 ? parsePartitions(f[4]) : Collections.emptyList();
                    Optional<Integer> generation = f.length > 5 ? Optional.of(Integer.parseInt(f[5])) : Optional.empty();
                    Subscription sub = new Subscription(topics, null, owned, generation.orElse(-1), Optional.empty());
                    if (!f[2].equals("-")) sub.setGroupInstanceId(Optional.of(f[2]));
                    members.put(f[1], sub);
                    break;
                }
                case "END": {
                    ConsumerPartitionAssignor assignor;
                    switch (assignorName) {
                        case "range": assignor = new RangeAssignor(); break;
                        case "roundrobin": assignor = new RoundRobinAssignor(); break;
                        case "cooperative-sticky": assignor = new CooperativeStickyAssignor(); break;
                        default: throw new IllegalArgumentException(assignorName);
                    }
                    Cluster cluster = new Cluster("c", List.of(node), partitions, Collections.emptySet(), Collections.emptySet());
                    Map<String, ConsumerPartitionAssignor.Assignment> result;
                    try {
                        result = assignor.assign(cluster, new GroupSubscription(members)).groupAssignment();
                    } catch (RuntimeException e) {
                        // The assignor itself fails on this input: say so ("!" + exception class).
                        System.out.println(caseName + " ! " + e.getClass().getSimpleName());
                        break;
                    }
                    for (String member : new TreeMap<>(result).keySet()) {
                        List<String> items = new ArrayList<>();
                        List<TopicPartition> tps = new ArrayList<>(result.get(member).partitions());
                        tps.sort((a, b) -> a.topic().equals(b.topic())
                            ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
                        for (TopicPartition tp : tps) items.add(tp.topic() + ":" + tp.partition());
                        System.out.println(caseName + " " + member + " " + (items.isEmpty() ? "-" : String.join(",", items)));
                    }
                    break;
                }
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
    }
}
