/// Manual-mode rearranging: moving tasks and sections, titling and removing sections.
extension DownloadList {
    /// Moves a task in manual mode (SDE's `moveTask(at:to:)`).
    ///
    /// `newIndexPath` is where the task ends up, as in `UITableView`: within its own section an
    /// item in `0 ..< taskCount`, into another section an item in `0 ... taskCount` of that one.
    /// A section left empty stays (manual sections are the caller's).
    ///
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/indexPathOutOfBounds`` (source or destination).
    /// - Returns: the move (empty when the task stays where it is).
    /// - Complexity: O(tasks between the two locations in their sections).
    @discardableResult
    public mutating func moveTask(
        at indexPath: ListIndexPath,
        to newIndexPath: ListIndexPath
    ) throws(DownloadListError) -> ListChange {
        try checkManualMode("moving a task")
        guard let slot = slot(at: indexPath) else { throw outOfBounds(indexPath) }
        let sameSection = indexPath.section == newIndexPath.section
        guard newIndexPath.section >= 0, newIndexPath.section < sections.count, newIndexPath.item >= 0,
            newIndexPath.item < sections[newIndexPath.section].members.count + (sameSection ? 0 : 1)
        else {
            throw DownloadListError(
                .indexPathOutOfBounds,
                "cannot move \(indexPath) to \(newIndexPath): the destination is outside the list"
            )
        }
        var change = ListChange()
        guard indexPath != newIndexPath else { return change }
        sections[indexPath.section].members.remove(at: indexPath.item)
        sections[newIndexPath.section].members.insert(slot, at: newIndexPath.item)
        if sameSection {
            renumberMembers(ofSectionAt: indexPath.section, from: min(indexPath.item, newIndexPath.item))
        } else {
            renumberMembers(ofSectionAt: indexPath.section, from: indexPath.item)
            renumberMembers(ofSectionAt: newIndexPath.section, from: newIndexPath.item)
        }
        change.movedItems = [ListChange.Move(from: indexPath, to: newIndexPath)]
        return change
    }

    /// Moves a whole section, with its title and tasks, in manual mode (SDE's
    /// `moveTasks(inSection:to:)`). `newSection` is where it ends up, `0 ..< sectionCount`.
    ///
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/sectionOutOfBounds``.
    /// - Returns: the section move (empty when it stays where it is).
    /// - Complexity: O(sections).
    @discardableResult
    public mutating func moveTasks(inSection section: Int, to newSection: Int) throws(DownloadListError) -> ListChange {
        try checkManualMode("moving a section")
        try checkSection(section)
        try checkSection(newSection)
        var change = ListChange()
        guard section != newSection else { return change }
        let moving = sections.remove(at: section)
        sections.insert(moving, at: newSection)
        renumberSections(from: min(section, newSection))
        change.movedSections = [ListChange.SectionMove(from: section, to: newSection)]
        return change
    }

    /// Changes a section's title in manual mode (SDE's `changeTitleOfSection(_:to:)`).
    ///
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/sectionOutOfBounds``, ``DownloadListError/Code/emptyTitle``.
    /// - Returns: the retitled section.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func changeTitleOfSection(_ section: Int, to newTitle: String) throws(DownloadListError)
        -> ListChange
    {
        try checkManualMode("changing a section title")
        try checkSection(section)
        try checkTitle(newTitle)
        sections[section].title = newTitle
        var change = ListChange()
        change.retitledSections = [section]
        return change
    }

    /// Removes an empty section in manual mode (a placeholder, or one whose tasks were all
    /// deleted or moved away).
    ///
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/sectionOutOfBounds``, ``DownloadListError/Code/sectionNotEmpty``.
    /// - Complexity: O(sections).
    @discardableResult
    public mutating func removeEmptySection(_ section: Int) throws(DownloadListError) -> ListChange {
        try checkManualMode("removing a section")
        try checkSection(section)
        guard sections[section].members.isEmpty else {
            throw DownloadListError(
                .sectionNotEmpty,
                "section \(section) still holds \(sections[section].members.count) tasks: delete or move them first"
            )
        }
        removeSection(atStorageIndex: section)
        var change = ListChange()
        change.deletedSections = [section]
        return change
    }
}
