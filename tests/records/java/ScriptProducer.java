// Test-only: runs a script of records (and transactions) with Kafka's Java producer, to make
// the reference log segments of tests/records (make_fixtures.py): every codec, and committed
// and aborted transactions (KIP-98).
//
// Usage: java -cp <kafka jars>:<dir> ScriptProducer <bootstrap> <topic> <transactional.id or ->
//            <compression.type> <batch.size> <linger.ms>
// stdin, one command a line (fields separated by a TAB; "-" is null, "=<base64>" is bytes):
//   BEGIN | COMMIT | ABORT | FLUSH
//   REC <key> <value> <timestamp ms> [<header key> <header value>]...
// Records go to partition 0. Before ABORT the producer is flushed so that the aborted
// records really reach the log (an abort drops batches not yet sent).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ScriptProducer {
    private static byte[] field(String f) {
        return f.equals("-") ? null : Base64.getDecoder().decode(f.substring(1));
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        boolean transactional = !args[2].equals("-");
        if (transactional) props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[2]);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, args[3]);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, args[4]);
        props.put(ProducerConfig.LINGER_MS_CONFIG, args[5]);
        String topic = args[1];
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            if (transactional) producer.initTransactions();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            final Exception[] failure = new Exception[1];
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) continue;
                String[] f = line.split("\t", -1);
                switch (f[0]) {
                    case "BEGIN": producer.beginTransaction(); break;
                    case "COMMIT": producer.commitTransaction(); break;
                    case "ABORT": producer.flush(); producer.abortTransaction(); break;
                    case "FLUSH": producer.flush(); break;
                    case "REC": {
                        List<Header> headers = new ArrayList<>();
                        for (int i = 4; i + 1 < f.length; i += 2) {
                            headers.add(new RecordHeader(
                                new String(field(f[i]), StandardCharsets.UTF_8), field(f[i + 1])));
                        }
                        producer.send(new ProducerRecord<>(topic, 0, Long.parseLong(f[3]),
                            field(f[1]), field(f[2]), headers), (metadata, error) -> {
                                if (error != null && failure[0] == null) failure[0] = error;
                            });
                        break;
                    }
                    default: throw new IllegalArgumentException("bad command: " + line);
                }
            }
            producer.flush();
            if (failure[0] != null) throw failure[0];
        }
    }
}
