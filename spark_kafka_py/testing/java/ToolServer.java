/*
 * Runs Kafka tools' main classes one after the other in one long-lived JVM, used by
 * spark_kafka_py.testing.tools.run_tool: each JVM start of a tool costs about two seconds of
 * wall time and of CPU, and the tests run tools hundreds of times.
 *
 *   ToolServer            (requests on stdin, one line each; answers on stdout)
 *
 * A request is one line of tab-separated fields, each the Base64 of its UTF-8 text:
 *
 *   <main class> TAB <stdin file> TAB <stdout file> TAB <stderr file> [TAB <arg>]...
 *
 * The run reads the stdin file as System.in and writes System.out and System.err to the two
 * output files, which the caller reads after the answer line "exit <code>". The exit code is
 * that of a JVM running the class alone:
 *
 * - 0 when main returns;
 * - the code of the first org.apache.kafka.common.utils.Exit.exit or Exit.halt of the run (the
 *   exit and halt procedures are replaced: they end the run, not the JVM); what the run prints
 *   after it (a tool's own catch of the Error that ends main) is dropped, as nothing prints
 *   after an exit; shutdown hooks added through Exit.addShutdownHook during the run are run at
 *   its end, as a JVM runs them at exit;
 * - 1 when main throws, with "Exception in thread "main" " and the stack trace on stderr.
 *
 * A System.exit (or Runtime.halt) anywhere else ends this JVM with its code, as it would end a
 * JVM of its own; the caller then takes the process's exit code and starts a new server for
 * the next run. Before the first request the line "ready" is written.
 *
 * Compiled at first use by spark_kafka_py.testing.tools into the cache directory.
 */
package sparkkafkapy;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.apache.kafka.common.utils.Exit;

public final class ToolServer {
    /** Writes to the current run's file; to nothing between runs. */
    private static final class Switch extends OutputStream {
        private volatile OutputStream target = OutputStream.nullOutputStream();

        void set(OutputStream next) {
            target = next;
        }

        @Override
        public void write(int b) throws IOException {
            target.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            target.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            target.flush();
        }
    }

    /** Thrown by the replaced exit and halt procedures: ends the run's main. */
    private static final class RunExit extends Error {
        private static final long serialVersionUID = 1L;

        RunExit(int code) {
            super("Exit.exit(" + code + ")", null, false, false);
        }
    }

    private static volatile Integer exitCode;
    private static final Switch OUT = new Switch();
    private static final Switch ERR = new Switch();
    private static final List<Thread> HOOKS = new ArrayList<>();

    private ToolServer() {
    }

    private static String field(String text) {
        return new String(Base64.getDecoder().decode(text), StandardCharsets.UTF_8);
    }

    private static synchronized void exitRun(int code) {
        if (exitCode == null) {
            exitCode = code;
            System.out.flush();
            System.err.flush();
            OUT.set(OutputStream.nullOutputStream());
            ERR.set(OutputStream.nullOutputStream());
        }
        throw new RunExit(code);
    }

    public static void main(String[] argv) throws Exception {
        PrintStream control = new PrintStream(
            new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        BufferedReader requests = new BufferedReader(
            new InputStreamReader(new FileInputStream(FileDescriptor.in), StandardCharsets.UTF_8));
        // The default charset, as a JVM's own System.out and System.err use.
        PrintStream outStream = new PrintStream(OUT, true);
        PrintStream errStream = new PrintStream(ERR, true);
        System.setOut(outStream);
        System.setErr(errStream);
        System.setIn(new ByteArrayInputStream(new byte[0]));
        Exit.setExitProcedure((code, message) -> exitRun(code));
        Exit.setHaltProcedure((code, message) -> exitRun(code));
        Exit.setShutdownHookAdder((name, runnable) -> {
            synchronized (HOOKS) {
                HOOKS.add(name == null ? new Thread(runnable) : new Thread(runnable, name));
            }
        });
        control.println("ready");
        String line;
        while ((line = requests.readLine()) != null) {
            String[] fields = line.split("\t", -1);
            if (fields.length < 4) {
                control.println("error bad request");
                continue;
            }
            String mainClass = field(fields[0]);
            String[] args = new String[fields.length - 4];
            for (int i = 4; i < fields.length; i++) {
                args[i - 4] = field(fields[i]);
            }
            int code;
            try (InputStream in = new FileInputStream(field(fields[1]));
                 OutputStream fileOut = new FileOutputStream(field(fields[2]));
                 OutputStream fileErr = new FileOutputStream(field(fields[3]))) {
                exitCode = null;
                OUT.set(fileOut);
                ERR.set(fileErr);
                System.setOut(outStream);
                System.setErr(errStream);
                System.setIn(in);
                code = run(mainClass, args);
                OUT.set(fileOut);
                ERR.set(fileErr);
                runHooks();
                System.out.flush();
                System.err.flush();
            } finally {
                OUT.set(OutputStream.nullOutputStream());
                ERR.set(OutputStream.nullOutputStream());
                System.setIn(new ByteArrayInputStream(new byte[0]));
            }
            control.println("exit " + code);
        }
    }

    private static int run(String mainClass, String[] args) {
        Throwable failure;
        try {
            Method main = Class.forName(mainClass).getMethod("main", String[].class);
            main.invoke(null, (Object) args);
            failure = null;
        } catch (InvocationTargetException e) {
            failure = e.getCause();
        } catch (RunExit e) {
            failure = e;
        } catch (ReflectiveOperationException e) {
            // What the java launcher says of a class it cannot run.
            System.err.println("Error: Could not find or load main class " + mainClass);
            System.err.println("Caused by: " + e);
            return 1;
        }
        if (exitCode != null) {
            return exitCode;
        }
        if (failure != null) {
            System.err.print("Exception in thread \"main\" ");
            failure.printStackTrace();
            return 1;
        }
        return 0;
    }

    private static void runHooks() throws InterruptedException {
        List<Thread> hooks;
        synchronized (HOOKS) {
            hooks = new ArrayList<>(HOOKS);
            HOOKS.clear();
        }
        for (Thread hook : hooks) {
            hook.start();
        }
        for (Thread hook : hooks) {
            hook.join();
        }
    }
}
