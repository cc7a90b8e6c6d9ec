! SPDX-License-Identifier: LGPL-2.1-or-later
!
! fortran_io.f90 -- a Fortran program on a "clf:" file: its MPI_File_*
! calls reach libromio-clf.so through libmpichfort, not from the program,
! which is what mpicc-clf's --no-as-needed is for.  Each rank writes its
! block of integers at its offset, then reads the other's.  Prints
! "fortran_io: ok" on rank 0 and exits 0 when every value came back.
program fortran_io
  use mpi
  implicit none
  integer, parameter :: n = 1000
  integer :: fh, ierr, rank, nprocs, i, other, bad
  integer :: buf(n), back(n)
  integer(kind=MPI_OFFSET_KIND) :: off
  integer :: status(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  do i = 1, n
    buf(i) = rank * 100000 + i
  end do
  call MPI_File_open(MPI_COMM_WORLD, 'clf:/fortran_io', &
       MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) then
    print *, 'fortran_io: open failed'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  off = int(rank, MPI_OFFSET_KIND) * n * 4
  call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, status, ierr)
  other = mod(rank + 1, nprocs)
  off = int(other, MPI_OFFSET_KIND) * n * 4
  call MPI_File_read_at_all(fh, off, back, n, MPI_INTEGER, status, ierr)
  bad = 0
  do i = 1, n
    if (back(i) /= other * 100000 + i) bad = bad + 1
  end do
  call MPI_File_close(fh, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, &
       MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (bad == 0) then
      print '(a)', 'fortran_io: ok'
    else
      print '(a,i0,a)', 'fortran_io: ', bad, ' values wrong'
    end if
  end if
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1
end program fortran_io
