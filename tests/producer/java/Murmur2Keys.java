// Test-only: Kafka's own key partitioning as an oracle for spark_kafka_py.producer.partitioner
// (tests/producer/test_partitioner.py). Reads one key a line from stdin (base64, possibly
// empty) and prints, per key, Utils.murmur2(key), then BuiltInPartitioner.partitionForKey(key, n)
// for each partition count n given as arguments, tab-separated.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

public final class Murmur2Keys {
    public static void main(String[] args) throws Exception {
        int[] counts = new int[args.length];
        for (int i = 0; i < args.length; i++) {
            counts[i] = Integer.parseInt(args[i]);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            byte[] key = Base64.getDecoder().decode(line);
            out.append(Utils.murmur2(key));
            for (int n : counts) {
                out.append('\t').append(BuiltInPartitioner.partitionForKey(key, n));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
