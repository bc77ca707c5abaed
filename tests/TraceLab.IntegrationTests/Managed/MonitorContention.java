// Four threads (named worker-0 .. worker-3) spend most of each round inside `synchronized` on one shared object
// ("shared") or each on an object of its own ("own", the control), for a given time. At the end each worker's own
// accounting from the JVM is printed as one JSON line: ThreadMXBean's blocked time (ms spent entering a contended
// monitor, with contention monitoring on) and blocked count, and its rounds.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

public class MonitorContention {
    static volatile long sink;

    static long spin(long iterations) {
        long x = 0;
        for (long i = 0; i < iterations; i++) x += i * 31 ^ (x >>> 3);
        return x;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int n = Integer.parseInt(args[1]);
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[2]) * 1e9);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        mx.setThreadContentionMonitoringEnabled(true);
        Object shared = new Object();
        Thread[] workers = new Thread[n];
        long[] rounds = new long[n];
        // The workers stay alive until their figures are read: a finished thread has no ThreadInfo.
        CountDownLatch done = new CountDownLatch(n), release = new CountDownLatch(1);
        for (int t = 0; t < n; t++) {
            final int id = t;
            final Object lock = mode.equals("shared") ? shared : new Object();
            workers[t] = new Thread(() -> {
                long k = 0;
                while (System.nanoTime() < deadline) {
                    synchronized (lock) { sink += spin(20000); }
                    sink += spin(5000);
                    k++;
                }
                rounds[id] = k;
                done.countDown();
                try { release.await(); } catch (InterruptedException e) { }
            }, "worker-" + t);
        }
        for (Thread w : workers) w.start();
        done.await();
        StringBuilder json = new StringBuilder("[");
        for (int t = 0; t < n; t++) {
            ThreadInfo info = mx.getThreadInfo(workers[t].getId());
            json.append(t == 0 ? "" : ",").append(String.format("{\"name\":\"%s\",\"blockedMs\":%d,\"blocked\":%d,"
                + "\"rounds\":%d}", workers[t].getName(), info.getBlockedTime(), info.getBlockedCount(), rounds[t]));
        }
        release.countDown();
        for (Thread w : workers) w.join();
        System.out.println(json.append(']'));
    }
}
