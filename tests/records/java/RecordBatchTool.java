// Test-only: Kafka's own Java record code (kafka-clients) as an oracle for our encoder
// (tests/records/test_encoder.py). One JVM run reads commands from stdin, one a line, fields
// separated by a TAB, "-" for null, "=<base64>" for bytes; it prints one line per command.
//
//   BUILD <codec> <level or -> <producerId> <producerEpoch> <baseSequence> <transactional>
//         then REC <key> <value> <timestamp ms> [<header key> <header value>]... lines,
//         then END: prints the batch MemoryRecordsBuilder writes (base offset 0, CreateTime,
//         partition leader epoch -1), base64.
//   CHECK <base64 records>: reads them with MemoryRecords.readableRecords, calls
//         ensureValid() (CRC-32C, sizes) on every batch and prints, per batch, a line
//         "BATCH attrs-fields" followed by tab-separated records "offset,ts,key,value,headers"
//         (each field base64 or "-"; headers as key:value pairs joined by ";"), each batch
//         ended by "|".
//   BOUND <key> <value> [<header key> <header value>]...: prints
//         AbstractRecords.estimateSizeInBytesUpperBound (magic 2, no compression).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.AbstractRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

public final class RecordBatchTool {
    private static byte[] field(String f) {
        return f.equals("-") ? null : Base64.getDecoder().decode(f.substring(1));
    }

    private static String b64(ByteBuffer b) {
        if (b == null) {
            return "-";
        }
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return Base64.getEncoder().encodeToString(out);
    }

    private static Header[] headers(String[] f, int from) {
        List<Header> out = new ArrayList<>();
        for (int i = from; i + 1 < f.length; i += 2) {
            out.add(new RecordHeader(new String(field(f[i]), StandardCharsets.UTF_8), field(f[i + 1])));
        }
        return out.toArray(new Header[0]);
    }

    private static Compression compression(String codec, String level) {
        switch (codec) {
            case "none": return Compression.NONE;
            case "gzip": return level.equals("-") ? Compression.gzip().build()
                    : Compression.gzip().level(Integer.parseInt(level)).build();
            case "snappy": return Compression.snappy().build();
            case "lz4": return level.equals("-") ? Compression.lz4().build()
                    : Compression.lz4().level(Integer.parseInt(level)).build();
            case "zstd": return level.equals("-") ? Compression.zstd().build()
                    : Compression.zstd().level(Integer.parseInt(level)).build();
            default: throw new IllegalArgumentException(codec);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        MemoryRecordsBuilder builder = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "BUILD":
                    builder = MemoryRecords.builder(ByteBuffer.allocate(1024), RecordBatch.CURRENT_MAGIC_VALUE,
                            compression(f[1], f[2]), TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP,
                            Long.parseLong(f[3]), Short.parseShort(f[4]), Integer.parseInt(f[5]),
                            Boolean.parseBoolean(f[6]), RecordBatch.NO_PARTITION_LEADER_EPOCH);
                    break;
                case "REC":
                    builder.append(Long.parseLong(f[3]), field(f[1]), field(f[2]), headers(f, 4));
                    break;
                case "END":
                    System.out.println(b64(builder.build().buffer()));
                    builder = null;
                    break;
                case "CHECK": {
                    MemoryRecords records = MemoryRecords.readableRecords(
                            ByteBuffer.wrap(Base64.getDecoder().decode(f[1])));
                    StringBuilder out = new StringBuilder();
                    for (RecordBatch batch : records.batches()) {
                        batch.ensureValid();
                        out.append("BATCH ").append(batch.compressionType().name).append(',')
                                .append(batch.timestampType()).append(',').append(batch.isTransactional())
                                .append(',').append(batch.isControlBatch()).append(',').append(batch.baseOffset())
                                .append(',').append(batch.lastOffset()).append(',').append(batch.maxTimestamp())
                                .append(',').append(batch.producerId()).append(',').append(batch.producerEpoch())
                                .append(',').append(batch.baseSequence()).append(',').append(batch.countOrNull());
                        for (Record r : batch) {
                            r.ensureValid();
                            out.append('\t').append(r.offset()).append(',').append(r.timestamp()).append(',')
                                    .append(b64(r.key())).append(',').append(b64(r.value())).append(',');
                            List<String> hs = new ArrayList<>();
                            for (Header h : r.headers()) {
                                hs.add(b64(ByteBuffer.wrap(h.key().getBytes(StandardCharsets.UTF_8))) + ":" + (h.value() == null ? "-" : b64(ByteBuffer.wrap(h.value()))));
                            }
                            out.append(String.join(";", hs));
                        }
                        out.append('|');
                    }
                    System.out.println(out);
                    break;
                }
                case "BOUND":
                    System.out.println(AbstractRecords.estimateSizeInBytesUpperBound(RecordBatch.CURRENT_MAGIC_VALUE,
                            CompressionType.NONE, field(f[1]), field(f[2]), headers(f, 3)));
                    break;
                default:
                    throw new IllegalArgumentException("unknown command " + f[0]);
            }
        }
    }
}
