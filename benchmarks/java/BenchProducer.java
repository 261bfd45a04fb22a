/*
 * Benchmark data writer for benchmarks/ (spark-kafka-py bench): Apache Kafka's own Java producer
 * (org.apache.kafka.clients.producer.KafkaProducer) writing NUM records with KEY_SIZE-byte keys
 * and VALUE_SIZE-byte values, partitioned by key hash (Kafka's default partitioner).
 *
 *   java -cp <kafka jars>:<classes> sparkkafkapy.BenchProducer BOOTSTRAP TOPIC NUM KEY_SIZE
 *        VALUE_SIZE [producer.config=value ...]
 *
 * Keys are the record number in hexadecimal, left-padded to KEY_SIZE (unique per record).
 * Values come from a pool of 4096 pseudo-random payloads (fixed seed) over a 16-letter alphabet:
 * about 4 bits of entropy per byte, so lz4/zstd compress them roughly 2x (ProducerPerformance
 * repeats one payload, which compresses unrealistically well). Prints "sent N records in T ms".
 * Compiled at first use by benchmarks/harness.py into the cache directory.
 */
package sparkkafkapy;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class BenchProducer {
    private BenchProducer() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: BenchProducer BOOTSTRAP TOPIC NUM KEY_SIZE VALUE_SIZE [k=v ...]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        long num = Long.parseLong(args[2]);
        int keySize = Integer.parseInt(args[3]);
        int valueSize = Integer.parseInt(args[4]);

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        for (int i = 5; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got " + args[i]);
            }
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }

        byte[] alphabet = "abcdefghijklmnop".getBytes(StandardCharsets.US_ASCII);
        Random random = new Random(42);
        byte[][] pool = new byte[4096][valueSize];
        for (byte[] value : pool) {
            for (int j = 0; j < valueSize; j++) {
                value[j] = alphabet[random.nextInt(alphabet.length)];
            }
        }
        AtomicReference<Exception> failure = new AtomicReference<>();
        long start = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (long i = 0; i < num && failure.get() == null; i++) {
                String hex = Long.toHexString(i);
                byte[] key = new byte[keySize];
                java.util.Arrays.fill(key, (byte) '0');
                byte[] digits = hex.getBytes(StandardCharsets.US_ASCII);
                int n = Math.min(digits.length, keySize);
                System.arraycopy(digits, digits.length - n, key, keySize - n, n);
                producer.send(
                        new ProducerRecord<>(topic, key, pool[(int) (i & 4095)]),
                        (metadata, exception) -> {
                            if (exception != null) {
                                failure.compareAndSet(null, exception);
                            }
                        });
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
        System.out.println("sent " + num + " records in " + (System.currentTimeMillis() - start) + " ms");
    }
}
