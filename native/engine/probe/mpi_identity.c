/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which MPI a compiler wrapper builds against, without a launcher:
 * MPI_Get_library_version and MPI_Get_version may be called before MPI_Init.
 * Prints three lines and then the library's own version text:
 *   family       open-mpi | intel-mpi | mpich (MPICH and its other derivatives) | unknown
 *   mpi.h        the version string of the header compiled against (the fallback)
 *   standard     MPI standard version, major.minor
 * The family comes from mpi.h's macros, which name the ABI the engine is
 * compiled for; Intel MPI is MPICH-derived and defines MPICH_VERSION too.
 */
#include <mpi.h>
#include <stdio.h>

int main(void)
{
#if defined(OPEN_MPI)
    const char *family = "open-mpi";
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#elif defined(I_MPI_VERSION)
    const char *family = "intel-mpi", *header = I_MPI_VERSION;
#elif defined(MPICH_VERSION)
    const char *family = "mpich", *header = MPICH_VERSION;
#else
    const char *family = "unknown", *header = "";
#endif
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor;
    MPI_Get_library_version(library, &len);
    MPI_Get_version(&major, &minor);
    printf("%s\n%s\n%d.%d\n%s\n", family, header, major, minor, library);
    return 0;
}
