/*
 * Runs one Kafka tool's main class several times in one JVM, used by
 * spark_kafka_py.testing.tools.run_tool_runs: each JVM start of a tool costs seconds, and a test
 * comparing several views of a tool (kafka-consumer-groups.sh --describe, --members, --state)
 * needs one run per view.
 *
 *   ToolRuns <main class> <separator> [<arg>... <separator>]...
 *
 * Every group of arguments ended by <separator> is one run: <main class>.main(args). Before each
 * run a line "<separator> <index>" (index from 0) is written to stdout and to stderr, so the
 * caller can split both streams by run. A run that throws ends the program with exit code 1 and
 * the exception's stack trace on stderr; a tool that calls Exit.exit ends the JVM with its code,
 * as it would alone. After the last run the JVM exits with 0 (a tool's non-daemon threads are
 * not waited for).
 *
 * Compiled at first use by spark_kafka_py.testing.tools into the cache directory.
 */
package sparkkafkapy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class ToolRuns {
    private ToolRuns() {
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length < 2) {
            System.err.println("usage: ToolRuns <main class> <separator> [<arg>... <separator>]...");
            System.exit(2);
        }
        Method main = Class.forName(argv[0]).getMethod("main", String[].class);
        String separator = argv[1];
        List<String[]> runs = new ArrayList<>();
        int from = 2;
        for (int i = 2; i < argv.length; i++) {
            if (argv[i].equals(separator)) {
                runs.add(Arrays.copyOfRange(argv, from, i));
                from = i + 1;
            }
        }
        if (from != argv.length) {
            System.err.println("ToolRuns: the last run's arguments are not ended by " + separator);
            System.exit(2);
        }
        for (int index = 0; index < runs.size(); index++) {
            System.out.println(separator + " " + index);
            System.out.flush();
            System.err.println(separator + " " + index);
            System.err.flush();
            try {
                main.invoke(null, (Object) runs.get(index));
            } catch (InvocationTargetException e) {
                e.getCause().printStackTrace();
                System.out.flush();
                System.exit(1);
            }
            System.out.flush();
            System.err.flush();
        }
        System.exit(0);
    }
}
