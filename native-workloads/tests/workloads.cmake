# CTest definitions for throttle, sendrecv and thrdperf (included by CMakeLists.txt).
if(WIN32)
    set(futex_or_semaphore win32-semaphore)
    set(lock_kind critical-section)
    set(event_kind win32-event)
else()
    set(futex_or_semaphore futex)
    set(lock_kind futex)
    set(event_kind eventfd)
endif()

# ---------------------------------------------------------------- throttle
# n = 8 x 10000 terms: 1 + ... + 80000 = 3200040000, checked by the workload.
workload_check(throttle unthrottled 0 "--threads|8|--chunk|10000|--repeat|2"
    JSON "workload=throttle,metrics.sum=3200040000,metrics.expectedSum=3200040000,metrics.sumOk=1,\
metrics.activeLimit=0,threads.7.iterations=20000,threads.7.partialSum=750005000")
workload_check(throttle throttled 0 "--threads|8|--chunk|10000|--repeat|2|2"
    JSON "params.active=2,metrics.sumOk=1,objects.0.name=throttle,objects.0.kind=${futex_or_semaphore}")
workload_check(throttle one-active 0
    "--threads|4|--active|1|--chunk|1000|--repeat|1|--result|${CMAKE_CURRENT_BINARY_DIR}/throttle.json"
    JSON "metrics.sum=8002000,metrics.sumOk=1" RESULT ${CMAKE_CURRENT_BINARY_DIR}/throttle.json)
# The check itself: one term missing must be caught (exit 6, JSON still written).
workload_check(throttle sum-check-fails 6 "--threads|4|--chunk|1000|--repeat|1|--miscount"
    JSON "metrics.sum=8001999,metrics.expectedSum=8002000,metrics.sumOk=0"
    STDERR "Sum check failed: sum 8001999 != expected 8002000")
workload_check(throttle bad.threads 5 "--threads|0" STDERR "--threads must be an integer between 1 and 1024")
workload_check(throttle bad.active 5 "--active|-1" STDERR "--active must be an integer between 0 and 1024")
workload_check(throttle bad.positional 5 "1025" STDERR "Invalid number of concurrent threads")
workload_check(throttle bad.overflow 5 "--threads|1024|--chunk|30000000" STDERR "overflows 64 bits")
workload_check(throttle bad.option 5 "--bogus" STDERR "Unknown option '--bogus'")
workload_check(throttle bad.chunk 5 "--chunk|lots" STDERR "--chunk must be an integer")

# ---------------------------------------------------------------- sendrecv
# Every variant runs briefly; the workload exits 6 unless consumed + left = sent.
set(variants event-inside-lock event-outside-lock lock-free receiver-only-lock)
foreach(v RANGE 1 4)
    math(EXPR i "${v} - 1")
    list(GET variants ${i} name)
    if(name STREQUAL "lock-free")
        set(first available)
        set(kind ${event_kind})
    else()
        set(first lock)
        set(kind ${lock_kind})
    endif()
    workload_check(sendrecv variant${v}.${name} 0 "--variant|${name}|--senders|2|--duration-ms|200"
        JSON "workload=sendrecv,params.variant=${v},params.variantName=${name},objects.0.name=${first},\
objects.0.kind=${kind},threads.2.role=receiver,threads.0.role=sender 0")
endforeach()
workload_check(sendrecv numeric-variant 0
    "--variant|3|--senders|1|--duration-ms|100|--result|${CMAKE_CURRENT_BINARY_DIR}/sendrecv.json"
    JSON "params.variantName=lock-free,params.senders=1" RESULT ${CMAKE_CURRENT_BINARY_DIR}/sendrecv.json)
workload_check(sendrecv bad.variant 5 "--variant|sometimes" STDERR "--variant must be one of event-inside-lock \\(1\\)")
workload_check(sendrecv bad.variant-number 5 "--variant|5" STDERR "--variant must be one of")
workload_check(sendrecv bad.senders 5 "--senders|17" STDERR "--senders must be an integer between 1 and 16")
workload_check(sendrecv bad.duration 5 "--duration-ms|0" STDERR "--duration-ms must be an integer between 1")
workload_check(sendrecv bad.positional 5 "3" STDERR "Unexpected argument '3'")
workload_check(sendrecv bad.affinity 5 "--affinity|x" STDERR "--affinity must be")

# ---------------------------------------------------------------- thrdperf
# Descending (worst case): object 0 is the longest, n x bias.
workload_check(thrdperf io-serial 0 "--kind|io|--mode|serial|--computations|3|--bias|5"
    JSON "workload=thrdperf,params.kind=io,params.mode=serial,computations.0.lengthMs=15,computations.2.lengthMs=5,\
computations.0.endOrder=0,computations.2.endOrder=2,metrics.idealMs=30,metrics.threadsUsed=1,threads.0.role=serial")
workload_check(thrdperf io-concurrent-one-slot 0
    "--kind|io|--mode|concurrent|--computations|3|--bias|5|--max-concurrency|1"
    JSON "params.mode=concurrent,metrics.threadsUsed=1,computations.1.endOrder=1,computations.2.endOrder=2,\
threads.2.role=computation 2,objects.0.name=finished")
workload_check(thrdperf io-ascending 0 "--kind|2|--mode|2|--computations|2|--bias|3|--order|ascending"
    JSON "params.order=ascending,computations.0.lengthMs=3,computations.1.lengthMs=6")
workload_check(thrdperf cpu-serial 0
    "--kind|cpu|--computations|2|--bias|2|--result|${CMAKE_CURRENT_BINARY_DIR}/thrdperf.json"
    JSON "params.kind=cpu,computations.1.lengthMs=2,computations.1.endOrder=1"
    RESULT ${CMAKE_CURRENT_BINARY_DIR}/thrdperf.json)
workload_check(thrdperf cpu-concurrent 0 "--kind|cpu|--mode|concurrent|--computations|4|--bias|2"
    JSON "params.mode=concurrent,computations.3.lengthMs=2")
workload_check(thrdperf bad.kind 5 "--kind|disk" STDERR "--kind must be one of cpu \\(1\\), io \\(2\\)")
workload_check(thrdperf bad.computations 5 "--computations|1"
    STDERR "--computations must be an integer between 2 and 20")
workload_check(thrdperf bad.computations-high 5 "--computations|21" STDERR "between 2 and 20")
workload_check(thrdperf bad.bias 5 "--bias|0" STDERR "--bias must be an integer between 1")
workload_check(thrdperf bad.mode 5 "--mode|parallel" STDERR "--mode must be one of serial")
workload_check(thrdperf bad.order 5 "--order|random" STDERR "--order must be one of descending")
workload_check(thrdperf bad.max-concurrency 5 "--max-concurrency|-1" STDERR "--max-concurrency must be")
workload_check(thrdperf bad.priority 5 "--priority|20" STDERR "between -20 and 19")
