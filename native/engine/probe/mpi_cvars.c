/* SPDX-License-Identifier: BSD-3-Clause */
/* Lists the library's control variables through the MPI tool interface
 * (MPI_T), which needs no launcher: one JSON object a line with the name, the
 * description and, for an enumeration, its items (value and name). mpiscope
 * tune reads MPICH's collective algorithms from it (src/mpiscope/tune/discover.py),
 * for the version that is really linked. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

int main(void)
{
    int provided, num;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "mpi-cvars: MPI_T_init_thread failed\n");
        return 1;
    }
    MPI_T_cvar_get_num(&num);
    for (int i = 0; i < num; i++) {
        char name[512], desc[8192];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype = MPI_T_ENUM_NULL;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len,
                                &bind, &scope) != MPI_SUCCESS)
            continue;
        fputs("{\"name\":", stdout);
        json_string(name);
        fputs(",\"desc\":", stdout);
        json_string(desc);
        fputs(",\"enum\":[", stdout);
        int items = 0;
        if (enumtype != MPI_T_ENUM_NULL) {
            char ename[256];
            int ename_len = sizeof ename;
            MPI_T_enum_get_info(enumtype, &items, ename, &ename_len);
            for (int j = 0; j < items; j++) {
                char iname[256];
                int value, iname_len = sizeof iname;
                MPI_T_enum_get_item(enumtype, j, &value, iname, &iname_len);
                printf("%s[%d,", j ? "," : "", value);
                json_string(iname);
                putchar(']');
            }
        }
        fputs("]}\n", stdout);
    }
    MPI_T_finalize();
    return 0;
}
