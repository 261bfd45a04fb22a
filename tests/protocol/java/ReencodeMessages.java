import java.nio.ByteBuffer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.Readable;

/**
 * Reads lines "ClassName version hex" from stdin: each is a message body encoded by our schemas.
 * Kafka's generated class org.apache.kafka.common.message.<ClassName>Data reads it at that
 * version, and the program prints, one line per input, the bytes Kafka writes back (hex),
 * or "LEFT n" when Kafka's reader left n bytes unread.
 */
public final class ReencodeMessages {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ", -1);
            Class<?> cls = Class.forName("org.apache.kafka.common.message." + parts[0] + "Data");
            short version = Short.parseShort(parts[1]);
            ByteBuffer buffer = ByteBuffer.wrap(hex.parseHex(parts[2]));
            ApiMessage message = (ApiMessage) cls
                .getConstructor(Readable.class, short.class)
                .newInstance(new ByteBufferAccessor(buffer), version);
            if (buffer.remaining() != 0) {
                System.out.println("LEFT " + buffer.remaining());
                continue;
            }
            ByteBuffer out = MessageUtil.toByteBufferAccessor(message, version).buffer();
            out.rewind();
            byte[] bytes = new byte[out.remaining()];
            out.get(bytes);
            System.out.println(hex.formatHex(bytes));
        }
    }
}
