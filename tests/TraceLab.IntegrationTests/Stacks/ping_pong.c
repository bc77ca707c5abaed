/* Two threads that hand a turn back and forth ROUNDS times (default 2000) through a mutex and a condition variable:
 * each blocks in pthread_cond_wait once a round, in a function of its own (wait_for_turn), so every round gives each
 * thread an off-CPU interval with a known stack. Usage: ping_pong [ROUNDS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_turn_changed = PTHREAD_COND_INITIALIZER;
static int g_turn;
static long g_rounds = 2000;

__attribute__((noinline)) static void wait_for_turn(int me)
{
    while (g_turn != me) pthread_cond_wait(&g_turn_changed, &g_lock);
}

static void *player(void *arg)
{
    int me = (int)(long)arg;
    pthread_mutex_lock(&g_lock);
    for (long i = 0; i < g_rounds; i++) {
        wait_for_turn(me);
        g_turn = 1 - me;
        pthread_cond_signal(&g_turn_changed);
    }
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t threads[2];
    if (argc > 1) g_rounds = atol(argv[1]);
    for (long i = 0; i < 2; i++) pthread_create(&threads[i], NULL, player, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("%ld rounds\n", g_rounds);
    return 0;
}
