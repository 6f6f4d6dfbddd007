! SPDX-License-Identifier: BSD-3-Clause
! The Fortran check (tests/mpi/test_profile_known.py): through mpif.h-style
! calls, 3 messages of 10 doubles from each even rank to the next odd one,
! received with MPI_IRECV + MPI_WAIT, then one MPI_ALLREDUCE of 4 integers
! and one MPI_BARRIER.
program fortran_traffic
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, req
  double precision :: buf(10)
  integer :: a(4), b(4)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  buf = 1.0d0
  a = rank
  do i = 1, 3
    if (mod(rank, 2) == 0) then
      call MPI_SEND(buf, 10, MPI_DOUBLE_PRECISION, rank + 1, 7, MPI_COMM_WORLD, ierr)
    else
      call MPI_IRECV(buf, 10, MPI_DOUBLE_PRECISION, rank - 1, 7, MPI_COMM_WORLD, req, ierr)
      call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  call MPI_ALLREDUCE(a, b, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
end program fortran_traffic
