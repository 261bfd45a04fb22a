import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

/**
 * Prints Kafka's error table, one line per code: code, name, retriable (the code's exception is
 * a RetriableException) and the exception's message ("" for NONE), separated by tabs.
 */
public final class PrintErrors {
    public static void main(String[] args) {
        for (Errors error : Errors.values()) {
            boolean retriable = error.exception() instanceof RetriableException;
            String description = error.exception() == null ? "" : error.message();
            System.out.println(error.code() + "\t" + error.name() + "\t" + retriable + "\t" + description);
        }
    }
}
